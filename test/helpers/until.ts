/** Polls `check` (which may answer a promise) every `everyMs` until it holds; throws naming `what` after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, what: string, ms = 10_000, everyMs = 20): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what}: not reached within ${ms} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
