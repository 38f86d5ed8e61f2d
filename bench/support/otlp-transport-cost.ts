/**
 * The CPU one request costs the live export's OTLP/HTTP transport (issue 32), apart from the spans: the official
 * transport as the `http/protobuf` export assembles it (`OTLPExporterBase` over `createOtlpHttpExportDelegate`, the
 * same `OTEL_EXPORTER_OTLP_*` settings) sends one fixed body of `--size` bytes `--requests` times, one after the
 * other, to a receiver in a child process (it reads each request and answers 200); after 50 warm-up requests, five
 * passes, each reporting this thread's CPU (`/proc/thread-self/schedstat`) and the process's (`process.cpuUsage`) per
 * request. Compare sizes to split a request's cost into its fixed part and its bytes'.
 *
 *   npx tsx bench/support/otlp-transport-cost.ts [--size 290000] [--requests 1000]
 */
import { createProtobufTransport } from '../../adapters/telemetry/otlp-exporter.js';
import { argOf } from './bench-args.js';
import { machineLine } from './machine.js';
import { startOtlpSink } from './otlp-sink.js';
import { processCpuUs, threadCpuNs } from './cpu-time.js';

const SIZE = Number(argOf('size', '290000'));
const REQUESTS = Number(argOf('requests', '1000'));

const receiver = await startOtlpSink();

// the transport `createDerivedProtobufExporter` sends through, with a fixed body instead of the spans' encoding
const body = new Uint8Array(SIZE).fill(7);
const exporter = await createProtobufTransport(receiver.endpoint, () => body, (name, cause) => new Error(`${name} is not installed`, { cause }));
if (exporter === null) throw new Error('the installed OTLP exporter packages do not offer the transport the live export assembles');
const send = (): Promise<void> =>
  new Promise((resolve, reject) => exporter.export([body], (r) => (r.code === 0 ? resolve() : reject(new Error(`export failed: ${r.code}`)))));

for (let i = 0; i < 50; i++) await send();
console.log(`OTLP/HTTP transport: ${SIZE} bytes a request, ${REQUESTS} requests a pass; ${machineLine()}`);
for (let pass = 0; pass < 5; pass++) {
  const t0 = threadCpuNs();
  const p0 = processCpuUs();
  for (let i = 0; i < REQUESTS; i++) await send();
  console.log(`pass ${pass + 1}: thread ${((threadCpuNs() - t0) / 1000 / REQUESTS).toFixed(0)} µs CPU/request, process ${((processCpuUs() - p0) / REQUESTS).toFixed(0)}`);
}
await exporter.shutdown();
receiver.stop();
