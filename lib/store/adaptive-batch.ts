/**
 * A batch size that halves after a failed batch (down to 1) and grows back, doubling, after each
 * good one (up to `max`). A batch too big for the database to finish within the socket timeout (a
 * slow engine, a large backlog) would otherwise fail the same way at every retry, and the work
 * behind it would never move: found when the impersonation ledger stopped chaining under load on
 * the embedded engine (issue 37).
 */
export function adaptiveBatch(max: number) {
  let size = max;
  return {
    get size() {
      return size;
    },
    succeeded() {
      size = Math.min(max, size * 2);
    },
    failed() {
      size = Math.max(1, Math.floor(size / 2));
    },
  };
}
