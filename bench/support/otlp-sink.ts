/**
 * The OTLP/HTTP receiver the telemetry benchmarks export to: a child process (so that its work is not this process's)
 * that reads each request to its end and answers 200 with an empty message, protobuf or JSON as the request's
 * content type asks.
 */
import { spawn } from 'node:child_process';

/** A running receiver. */
export interface OtlpSink {
  /** Its base URL, `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  /** The child process's id (to read its CPU time from `/proc/<pid>/stat`). */
  readonly pid: number;
  /** Ends the child process. */
  readonly stop: () => void;
}

const SINK_SCRIPT = `require('node:http').createServer((q, s) => { q.on('data', () => {}); q.on('end', () => { const json = String(q.headers['content-type']).includes('json'); s.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : ''); }); }).listen(0, '127.0.0.1', function () { console.log(this.address().port); }); process.on('disconnect', () => process.exit(0));`;

/** Starts a receiver on a free loopback port; it ends with {@link OtlpSink.stop} or when this process does. */
export const startOtlpSink = async (): Promise<OtlpSink> => {
  const child = spawn(process.execPath, ['-e', SINK_SCRIPT], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const port = await new Promise<string>((resolve, reject) => {
    child.once('error', reject);
    child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()));
  });
  return { endpoint: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => void child.kill() };
};
