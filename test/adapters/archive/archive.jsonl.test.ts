import { join } from 'node:path';
import { openJsonlEventStore } from '../../../adapters/store/jsonl/index.js';
import { describeArchiveSuite, tempDir } from './archive.shared.js';

describeArchiveSuite('jsonl', {
  open: async () => {
    const dir = join(tempDir(), 'store');
    return { store: await openJsonlEventStore(dir, { durability: 'none' }), spec: `jsonl:${dir}` };
  },
});
