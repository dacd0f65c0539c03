import { Presets, SingleBar } from 'cli-progress';
import type { OutputStream } from '../shared/cli-context';
import { safeForTerminal } from '../shared/terminal-text';
import type { BadLine, ImportProgressListener, ImportState } from './ndjson-importer';

/** Bad lines are printed one by one up to this many; after that only counted. */
const BAD_LINES_PRINTED = 20;

function percent(state: ImportState): string {
  return state.fileSize === 0 ? '100' : ((100 * state.bytesRead) / state.fileSize).toFixed(0);
}

/**
 * Progress on a terminal: a cli-progress bar over the bytes of the file, with bad lines and retries
 * printed above it. Written to stderr so that stdout carries only the summary (and `--json` stays
 * parseable).
 */
export class ProgressBarListener implements ImportProgressListener {
  private readonly bar: SingleBar;
  private badLinesPrinted = 0;

  constructor(private readonly stream: OutputStream & NodeJS.WritableStream) {
    this.bar = new SingleBar(
      {
        stream: stream as NodeJS.WritableStream,
        format:
          'import [{bar}] {percentage}% | {lines} lines | {accepted} accepted | {bad} bad | {retried} retried | eta {eta_formatted}',
        hideCursor: true,
        etaBuffer: 50,
        barsize: 30,
      },
      Presets.shades_classic,
    );
  }

  start(state: ImportState): void {
    this.bar.start(state.fileSize, state.bytesRead, this.payload(state));
  }
  update(state: ImportState): void {
    this.bar.update(state.bytesRead, this.payload(state));
  }
  badLine(line: BadLine): void {
    if (this.badLinesPrinted >= BAD_LINES_PRINTED) return;
    this.badLinesPrinted += 1;
    this.above(`line ${line.line}: ${safeForTerminal(line.reason)}`);
  }
  retry(attempt: number, reason: string, waitMs: number, firstLine: number, lastLine: number): void {
    this.above(
      `lines ${firstLine}-${lastLine}: ${safeForTerminal(reason)}; retry ${attempt} in ${(waitMs / 1000).toFixed(1)} s`,
    );
  }
  stop(state: ImportState): void {
    this.bar.update(state.bytesRead, this.payload(state));
    this.bar.stop();
  }

  private above(text: string): void {
    // Clear the bar's line, print, and let the next redraw put the bar back underneath.
    this.stream.write(`\r\x1b[2K${text}\n`);
    this.bar.render();
  }

  private payload(state: ImportState) {
    return {
      lines: state.linesRead,
      accepted: state.accepted,
      bad: state.badLines,
      retried: state.retriedBatches,
    };
  }
}

/** Progress in a log or a pipe: one plain line every `intervalMs`, plus bad lines and retries as they come. */
export class PlainProgressListener implements ImportProgressListener {
  private lastPrinted = 0;
  private badLinesPrinted = 0;

  constructor(
    private readonly stream: OutputStream,
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    this.lastPrinted = this.now();
  }
  update(state: ImportState): void {
    if (this.now() - this.lastPrinted < this.intervalMs) return;
    this.lastPrinted = this.now();
    this.stream.write(
      `progress: ${percent(state)}% of the file, ${state.linesRead} lines read, ${state.accepted} accepted, ` +
        `${state.badLines} bad, ${state.retriedBatches} batches retried\n`,
    );
  }
  badLine(line: BadLine): void {
    if (this.badLinesPrinted >= BAD_LINES_PRINTED) return;
    this.badLinesPrinted += 1;
    this.stream.write(`line ${line.line}: ${safeForTerminal(line.reason)}\n`);
    if (this.badLinesPrinted === BAD_LINES_PRINTED)
      this.stream.write('(further bad lines are only counted)\n');
  }
  retry(attempt: number, reason: string, waitMs: number, firstLine: number, lastLine: number): void {
    this.stream.write(
      `lines ${firstLine}-${lastLine}: ${safeForTerminal(reason)}; retry ${attempt} in ${(waitMs / 1000).toFixed(1)} s\n`,
    );
  }
  stop(): void {}
}
