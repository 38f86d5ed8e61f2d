import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openJsonlEventStore } from '../../adapters/store/jsonl/index.js';
import { describeCatchUpLive } from './catch-up-live.shared.js';

describeCatchUpLive('jsonl', { create: async () => openJsonlEventStore(mkdtempSync(join(tmpdir(), 'steerlog-proj-'))) });
