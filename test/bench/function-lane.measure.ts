/**
 * The functions lane measured alone, apart from the server and its load: one `createFunctionRunner`
 * (the lane process and its isolate, as the router has them) runs the bench's messages, as stored,
 * through a pass-through insert function in calls of a fixed size, and prints the CPU each side spends
 * per invocation: this process's (encoding the calls, the socket, reading the answers) and the lane
 * process's (from `/proc`, Linux only). For what a change to the lane or its codec costs, without the
 * noise of the full bench (BENCHMARKS.md, "The lane, measured alone").
 *
 *   node --require ./test/support/swc-register.js test/bench/function-lane.measure.ts [sizes] [invocations]
 *
 * `sizes`: invocations per call, comma-separated (default 8,25,64); `invocations`: per size (100000).
 */
import { readFileSync } from 'node:fs';
import {
  createFunctionRunner,
  MESSAGE_HANDLERS,
  type FunctionEntry,
  type FunctionInvocation,
} from '@tributary/functions';
import { createBenchMessages } from './bench-messages';

const PASS_THROUGH = Object.values(MESSAGE_HANDLERS)
  .map((handler) => `async function ${handler}(event) { return event; }`)
  .join('\n');

/** CPU time of this process's children (the lane's processes), in µs. */
function lanesCpuMicros(): number {
  const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8')
    .trim()
    .split(' ')
    .filter(Boolean);
  let ticks = 0;
  for (const pid of children) {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  // Clock ticks of 10 ms (USER_HZ 100).
  return ticks * 10_000;
}

async function measure(size: number, total: number): Promise<string> {
  const runner = createFunctionRunner({ workers: 1 });
  try {
    const fn = {
      workspaceId: 'ws_bench',
      functionId: 'ifn_pass_through',
      version: 1,
      kind: 'INSERT_DESTINATION' as const,
      code: PASS_THROUGH,
    };
    const messages = createBenchMessages('bench-write-key');
    const settings = {};
    const call = (): FunctionInvocation[] =>
      messages.storedBatch(size).payloads.map((json) => {
        const payload = JSON.parse(json) as { type: keyof typeof MESSAGE_HANDLERS };
        return {
          fn,
          entry: MESSAGE_HANDLERS[payload.type] as FunctionEntry,
          payload,
          payloadJson: json,
          settings,
          context: { invocationId: 'bench' },
        };
      });
    // Warm: the isolate built, the code paths of both processes compiled.
    for (let index = 0; index < 50; index += 1) await runner.invokeAll(call());
    const calls = Array.from({ length: 40 }, call);
    const cpuBefore = process.cpuUsage();
    const laneBefore = lanesCpuMicros();
    const begun = performance.now();
    let done = 0;
    let unchanged = 0;
    while (done < total) {
      const results = await runner.invokeAll(calls[((done / size) % calls.length) | 0]!);
      for (const result of results) if (result.status === 'resolved' && result.valueUnchanged) unchanged += 1;
      done += size;
    }
    const seconds = (performance.now() - begun) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const lane = lanesCpuMicros() - laneBefore;
    if (unchanged !== done) throw new Error(`${done - unchanged} of ${done} invocations came back changed`);
    return (
      `calls of ${size}: ${Math.round(done / seconds).toLocaleString('en-US')} invocations/s, ` +
      `this process ${((cpu.user + cpu.system) / done).toFixed(1)} µs per invocation, ` +
      `the lane process ${(lane / done).toFixed(1)} µs`
    );
  } finally {
    await runner.close();
  }
}

async function main(): Promise<void> {
  const sizes = (process.argv[2] ?? '8,25,64').split(',').map(Number);
  const total = Number(process.argv[3] ?? 100_000);
  // The lane does not keep a process alive by itself (its channel is unreferenced): this does.
  const alive = setInterval(() => undefined, 60_000);
  try {
    for (const size of sizes) console.log(await measure(size, total));
  } finally {
    clearInterval(alive);
  }
}

void main();
