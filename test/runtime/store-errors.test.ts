import { describe, expect, it } from 'vitest';
import {
  ConcurrencyError,
  DuplicateEventIdError,
  EventTooLargeError,
  InvalidEventError,
  InvalidStreamIdError,
  isStoreError,
  StoreClosedError,
  StoreCorruptError,
  StoreIoError,
} from '../../runtime/ports/store-errors.js';
import { streamRevision } from '../../runtime/ports/event-store.js';

describe('isStoreError', () => {
  it('is true for every typed store error', () => {
    for (const e of [
      new ConcurrencyError('s', 0n, streamRevision(1)),
      new InvalidStreamIdError('', 'empty'),
      new InvalidEventError(0, 'x'),
      new EventTooLargeError(0, 2, 1),
      new DuplicateEventIdError('s', 'a', 'x'),
      new StoreClosedError(),
      new StoreIoError('open'),
      new StoreCorruptError('f', 0, 'x'),
    ]) {
      expect(isStoreError(e), e.name).toBe(true);
    }
  });

  it('is false for raw errors that also carry a string code (errno, a PostgreSQL SQLSTATE), so stores wrap them', () => {
    expect(isStoreError(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }))).toBe(false);
    expect(isStoreError(Object.assign(new Error('terminating connection'), { code: '57P01' }))).toBe(false);
    expect(isStoreError({ code: 'store-io', message: 'not an Error' })).toBe(false);
  });
});
