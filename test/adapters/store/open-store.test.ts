import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  it('an installed driver that misses a module of its own keeps its own error (it is not "not installed")', async () => {
    // as `@kurrent/kurrentdb-client` does when its platform's `@kurrent/bridge-…` binary was not installed
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-driver-'));
    try {
      const driver = join(dir, 'driver.cjs');
      writeFileSync(driver, "require('steerlog-test-no-such-module');\n");
      const e = await requireStoreDriver('kurrentdb://', driver).then(
        () => null,
        (x: unknown) => x,
      );
      expect(isStoreDriverMissingError(e)).toBe(false);
      expect(e).toMatchObject({ code: 'MODULE_NOT_FOUND' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an installed driver loads', async () => {
    await expect(requireStoreDriver('postgres://', STORE_DRIVER_PACKAGES.postgres)).resolves.toBeUndefined();
    await expect(requireStoreDriver('esdb://', STORE_DRIVER_PACKAGES.esdb)).resolves.toBeUndefined();
  });
});
