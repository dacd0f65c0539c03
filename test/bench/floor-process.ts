/**
 * A floor's router run as a process of its own, as Tributary's router is (`replay-floor.consumer.ts`,
 * `postgres-floor.consumer.ts`): each reads its messages once to warm up, prints `warmed up`, reads
 * them again timed and prints `done` (and what it measured on that line).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { round } from './load-loop';

/** CPU time so far of the processes a floor is measured by, read at both marks. */
export type Readings<Reading> = (floorPid: number) => Reading;

export interface FloorRun<Reading> {
  /** Read when the floor printed `warmed up`, and when it printed `done`. */
  before: Reading;
  after: Reading;
  /** The floor's `done` line. */
  doneLine: string;
}

export async function runFloorProcess<Reading>(
  script: string,
  env: Record<string, string>,
  readings: Readings<Reading>,
): Promise<FloorRun<Reading>> {
  const root = join(__dirname, '..', '..');
  const child = spawn(
    process.execPath,
    ['--require', join(root, 'test/support/swc-register.js'), join(__dirname, script)],
    { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  let before: Reading | undefined;
  let after: { reading: Reading; line: string } | undefined;
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      output = (output + text).slice(-4000);
      if (text.includes('warmed up')) before = readings(child.pid!);
      const done = /^done.*$/m.exec(text);
      if (done) after = { reading: readings(child.pid!), line: done[0] };
    });
    child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
    child.once('exit', (code) =>
      code === 0 && before !== undefined && after
        ? resolve()
        : reject(new Error(`${script} exited with ${code}:\n${output}`)),
    );
    child.once('error', reject);
  });
  return { before: before!, after: after!.reading, doneLine: after!.line };
}

/** CPU µs per message between two readings in ms; null when either is missing. */
export function cpuUsPerMessage(fromMs: number | null, toMs: number | null, messages: number): number | null {
  return fromMs === null || toMs === null ? null : round(((toMs - fromMs) * 1000) / messages, 1);
}
