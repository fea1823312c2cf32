/**
 * A `createdAt` range for a filter, from the epoch milliseconds a list route takes (`since`,
 * `until`, both inclusive), stored as `at` turns them (a number, or a Date).
 */
export function createdWithin<T>(since: number | undefined, until: number | undefined, at: (millis: number) => T) {
  if (since === undefined && until === undefined) return {};
  return { createdAt: { ...(since !== undefined && { $gte: at(since) }), ...(until !== undefined && { $lte: at(until) }) } };
}
