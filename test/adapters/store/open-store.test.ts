import { describe, expect, it } from 'vitest';
import {
  isStoreDriverMissingError,
  requireStoreDriver,
  STORE_DRIVER_PACKAGES,
  StoreDriverMissingError,
} from '../../../adapters/store/open-store.js';

describe('store drivers are loaded on demand', () => {
  it('a driver package that is not installed is a typed error naming the package to install', async () => {
    const e = await requireStoreDriver('postgres://', 'steerlog-test-no-such-driver').then(
      () => null,
      (x: unknown) => x,
    );
    expect(isStoreDriverMissingError(e)).toBe(true);
    expect(e).toBeInstanceOf(StoreDriverMissingError);
    expect(e).toMatchObject({ code: 'store-driver-missing', scheme: 'postgres://', packageName: 'steerlog-test-no-such-driver' });
    expect((e as Error).message).toBe(
      'the postgres:// store needs the package "steerlog-test-no-such-driver", which is not installed: npm install steerlog-test-no-such-driver',
    );
  });

  it('an installed driver loads', async () => {
    await expect(requireStoreDriver('postgres://', STORE_DRIVER_PACKAGES.postgres)).resolves.toBeUndefined();
    await expect(requireStoreDriver('esdb://', STORE_DRIVER_PACKAGES.esdb)).resolves.toBeUndefined();
  });
});
