import { expect } from 'vitest';
import { runCli } from '../cli/support/run-cli.js';
import { Host } from '../../../host/host.js';
import type { HostOptions } from '../../../host/host-types.js';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../../runtime/runtime.js';
import { silentLogger } from '../../../runtime/logger.js';
import { startHttpServer, type HttpServerOptions, type RunningHttpServer } from '../../../adapters/http/server.js';
import type { HostFrame, ServerResponse } from '../../../host/schemas.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { GateModel } from '../../support/gate-model.js';
import type { ChildManager } from '../../../runtime/children/child-manager.js';

export interface TestHost {
  readonly url: string;
  readonly host: Host;
  readonly runtime: Runtime;
  readonly model: GateModel;
  readonly store: RuntimeOptions['store'];
  readonly server: RunningHttpServer;
  readonly logs: string[];
  rpc(method: string, payload: unknown, init?: { headers?: Record<string, string>; rpcId?: string }): Promise<ServerResponse>;
  close(): Promise<void>;
}

export interface TestHostOptions {
  readonly store?: RuntimeOptions['store'];
  readonly model?: GateModel;
  readonly runtime?: (options: RuntimeOptions) => Runtime;
  readonly host?: Partial<HostOptions>;
  readonly http?: Partial<HttpServerOptions>;
  /** A children manager for the host's runtime (the host's `children` option). @defaultValue none */
  readonly children?: (runtime: Runtime) => ChildManager;
}

let rpcCounter = 0;

/** A Host on a real HTTP server (port 0) over a memory store and a gate model, for in-process HTTP tests. */
export const startTestHost = async (options: TestHostOptions = {}): Promise<TestHost> => {
  const store = options.store ?? new MemoryEventStore();
  const model = options.model ?? new GateModel();
  const runtimeOptions: RuntimeOptions = { store, model, logger: silentLogger, writeBatchDelayMs: 5 };
  const runtime = (options.runtime ?? createRuntime)(runtimeOptions);
  const children = options.children?.(runtime);
  const host = new Host({ runtime, logger: silentLogger, ...(children ? { children } : {}), ...options.host });
  const logs: string[] = [];
  const server = await startHttpServer({ host, port: 0, log: (l) => logs.push(l), ...options.http });
  return {
    url: server.url,
    host,
    runtime,
    model,
    store,
    server,
    logs,
    rpc: async (method, payload, init = {}) => {
      const res = await fetch(`${server.url}/api/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...init.headers },
        body: JSON.stringify({ type: 'client-request', rpcId: init.rpcId ?? `rpc-${++rpcCounter}`, method, payload }),
      });
      return (await res.json()) as ServerResponse;
    },
    close: async () => {
      model.releaseAll();
      await server.close();
      await host.close();
    },
  };
};

/** The value of an ok reply (fails the test with the error otherwise). */
export const valueOf = <T = Record<string, unknown>>(r: ServerResponse): T => {
  if (!r.result.ok) throw new Error(`expected ok, got ${JSON.stringify(r.result.error)}`);
  return r.result.value as T;
};
export const errorOf = (r: ServerResponse) => {
  if (r.result.ok) throw new Error(`expected an error, got ${JSON.stringify(r.result.value)}`);
  return r.result.error;
};

/** A live-mirror client: collects frames (and their SSE ids) from GET /api/stream. */
export interface MirrorClient {
  readonly frames: HostFrame[];
  readonly ids: (string | undefined)[];
  /** Resolves once a frame satisfying the predicate has arrived (checks frames already received too). */
  waitFor(predicate: (f: HostFrame) => boolean): Promise<HostFrame>;
  close(): void;
  readonly ended: Promise<void>;
}

export const openMirror = async (url: string, query = '', headers: Record<string, string> = {}): Promise<MirrorClient> => {
  const ac = new AbortController();
  const res = await fetch(`${url}/api/stream${query}`, { headers, signal: ac.signal });
  if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}`);
  const frames: HostFrame[] = [];
  const ids: (string | undefined)[] = [];
  const waiters: { p: (f: HostFrame) => boolean; resolve: (f: HostFrame) => void }[] = [];
  const ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let sep: number;
        while ((sep = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, sep);
          buffer = buffer.slice(sep + 2);
          let data = '';
          let id: string | undefined;
          for (const line of block.split('\n')) {
            if (line.startsWith('data: ')) data += line.slice(6);
            else if (line.startsWith('id: ')) id = line.slice(4);
          }
          if (!data) continue;
          const frame = JSON.parse(data) as HostFrame;
          frames.push(frame);
          ids.push(id);
          for (const w of [...waiters]) if (w.p(frame)) (waiters.splice(waiters.indexOf(w), 1), w.resolve(frame));
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    frames,
    ids,
    waitFor: (p) => {
      const seen = frames.find(p);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ p, resolve }));
    },
    close: () => ac.abort(),
    ended,
  };
};

/** `steerlog <argv…>` run in process (a `--json` command), its standard output parsed: what a console answer must equal. */
export const cliJson = async (...argv: string[]): Promise<Record<string, unknown>> => JSON.parse((await runCli(...argv)).stdout) as Record<string, unknown>;

/** A GET of the host's console API that must answer 200, its JSON body. */
export const getJson = async <T>(host: TestHost, path: string): Promise<T> => {
  const res = await fetch(`${host.url}${path}`);
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
};
