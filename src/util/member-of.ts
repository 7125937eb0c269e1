/** `value` as a member of the `allowed` literals, or undefined when it is none of them (no cast needed by callers). */
export function memberOf<T extends string>(allowed: readonly T[], value: unknown): T | undefined {
  return allowed.find((member) => member === value);
}
