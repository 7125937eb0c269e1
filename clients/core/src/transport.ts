import type { Answer, Clock, Send } from './types.js';

/** `fetch` with a timeout; every failure, the timeout included, is a `no-answer` value. */
export const fetchSend: Send = async (url, headers, body, timeoutMs) => {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const res = await fetch(url, { method: 'POST', headers, body, signal: controller.signal });
    const text = await res.text();
    return {
      kind: 'answer',
      status: res.status,
      body: text,
      policy: res.headers.get('ratelimit-policy'),
      retryAfter: res.headers.get('retry-after'),
    } satisfies Answer;
  } catch (err) {
    return { kind: 'no-answer', reason: controller.signal.aborted ? 'timeout' : String((err as Error)?.message ?? err) } satisfies Answer;
  } finally {
    clearTimeout(timer);
  }
};

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const timer = setTimeout(fn, ms);
    // A pending flush must not keep a Node process alive on its own.
    (timer as { unref?: () => void }).unref?.();
    return () => clearTimeout(timer);
  },
};

export const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
