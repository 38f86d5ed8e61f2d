import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The package as a user gets it: `npm pack`, the tarball installed (from the npm cache when it can) into a fresh
 * strict ESM NodeNext project and into a CommonJS project, each typechecked with `skipLibCheck: false` and no
 * `@types/pg`, then run: a session, a custom projection (its evolve narrows without casts), the test kit, a
 * `postgres://`, `esdb://` and `kurrentdb://` spec without its driver (a typed error naming the package), and the CLI.
 *
 * Slow (a build, two installs, two compilations): opt in with STEERLOG_E2E_PACKAGE=1 (`.ci/run` does, as its own step).
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const TYPES_NODE = '@types/node@20';
const enabled = process.env.STEERLOG_E2E_PACKAGE === '1';

const run = (cmd: string, args: readonly string[], cwd: string) => spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' } });
const ok = (r: ReturnType<typeof run>): string => {
  if (r.status !== 0) throw new Error(`exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
};

const STRICT = {
  strict: true,
  skipLibCheck: false,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  verbatimModuleSyntax: true,
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  target: 'ES2022',
  lib: ['ES2023'],
  types: ['node'],
  outDir: 'out',
};

/** The program both consumers compile: the public API only, no casts of event data. */
const program = (esm: boolean): string => `
import { createRuntime, createUserMessage, isStoreDriverMissingError, MemoryCheckpointStore, MemoryEventStore, openStore } from 'steerlog';
import { defineProjection, runProjection } from 'steerlog/projections';
import { LogBuilder, msg, projectionSpecification, ScriptedModel, sequentialIds, steppingClock } from 'steerlog/testing';

const prompts = defineProjection<{ prompts: string[] }>({
  name: 'prompts',
  version: 1,
  initialState: { prompts: [] },
  evolve: (state, { event }) => {
    if (event.type === 'user/message') state.prompts.push(event.data.id);
    return state;
  },
});

${esm ? '' : 'const main = async (): Promise<void> => {'}
const store = new MemoryEventStore();
const runtime = createRuntime({ store, model: new ScriptedModel(['hello']), clock: steppingClock(), ids: sequentialIds() });
const agent = runtime.createSession({ sessionId: 'consumer' });
agent.followup(createUserMessage('hi', { kind: 'user' }, { newId: () => 'm1' }));
await agent.whenIdle();
await agent.dispose();

const run = runProjection(prompts, { store, checkpoints: new MemoryCheckpointStore() });
await run.caughtUp;
await run.stop();

projectionSpecification(prompts).given(new LogBuilder().followup(msg('p1')).runTurn()).then({ prompts: ['p1'] });

const drivers: string[] = [];
for (const spec of ['postgres://nobody@127.0.0.1:1/none', 'esdb://127.0.0.1:1?tls=false', 'kurrentdb://127.0.0.1:1?tls=false']) {
  try {
    await openStore(spec);
    drivers.push('loaded');
  } catch (e) {
    drivers.push(isStoreDriverMissingError(e) ? e.code + ' ' + e.packageName : String(e));
  }
}
console.log(JSON.stringify({ events: agent.events.length, state: run.state(), drivers }));
${esm ? '' : '};\nvoid main();'}
`;

describe.skipIf(!enabled)('the packed package in fresh consumer projects', () => {
  let work = '';
  let tarball = '';
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'steerlog-consumer-'));
    ok(run('npm', ['pack', '--pack-destination', work, '--silent'], ROOT));
    tarball = join(work, readdirSync(work).find((f) => f.endsWith('.tgz'))!);
  }, 300_000);
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const project = (name: string, esm: boolean): string => {
    const dir = join(work, name);
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, type: esm ? 'module' : 'commonjs' }, null, 2));
    // a CommonJS project compiles `import … from` to `require()` (verbatimModuleSyntax would forbid the ESM syntax)
    const compilerOptions = esm ? STRICT : { ...STRICT, verbatimModuleSyntax: false };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['src'] }, null, 2));
    writeFileSync(join(dir, 'src/main.ts'), program(esm));
    ok(run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--silent', tarball, TYPES_NODE], dir));
    return dir;
  };

  it.each([
    ['strict ESM (NodeNext)', true],
    ['CommonJS (require of the ES module)', false],
  ])('%s: typechecks with skipLibCheck false, runs a session, a projection and the CLI', (_name, esm) => {
    const dir = project(esm ? 'esm-consumer' : 'cjs-consumer', esm);
    const installed = readdirSync(join(dir, 'node_modules'));
    expect(installed).not.toContain('pg'); // optional peers are not installed
    expect(installed).not.toContain('@eventstore');
    expect(installed).not.toContain('@kurrent');
    expect(readdirSync(join(dir, 'node_modules/@types'))).toEqual(['node']);

    ok(run(process.execPath, [TSC, '-p', '.'], dir));
    const out = ok(run(process.execPath, ['out/main.js'], dir));
    expect(JSON.parse(out)).toEqual({
      events: expect.any(Number),
      state: { prompts: ['m1'] },
      drivers: ['store-driver-missing pg', 'store-driver-missing @eventstore/db-client', 'store-driver-missing @kurrent/kurrentdb-client'],
    });

    const bin = join(dir, 'node_modules/.bin/steerlog');
    const demo = run(bin, ['demo', '--store', 'jsonl:./data', '--session', 's1'], dir);
    expect(demo.status, demo.stderr).toBe(0);
    const audit = run(bin, ['audit', '--store', 'jsonl:./data', 's1', '--json'], dir);
    expect(audit.status, audit.stderr).toBe(0);
    expect(JSON.parse(audit.stdout)).toMatchObject({ stream: 's1', ok: true });
  }, 300_000); // a build-free install, a compilation and four runs: minutes on a loaded 2-core machine
});
