import { adaptiveBatch } from '../../lib/store/adaptive-batch.js';

describe('an adaptive batch size', () => {
  it('halves after each failure down to 1, and doubles back after each success up to its most', () => {
    const batch = adaptiveBatch(500);
    expect(batch.size).toBe(500);
    for (const expected of [250, 125, 62, 31, 15, 7, 3, 1, 1]) {
      batch.failed();
      expect(batch.size).toBe(expected);
    }
    for (const expected of [2, 4, 8, 16, 32, 64, 128, 256, 500, 500]) {
      batch.succeeded();
      expect(batch.size).toBe(expected);
    }
  });
});
