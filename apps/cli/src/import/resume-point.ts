import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CliError } from '../shared/cli-context';

/**
 * Where an import stands, written after each batch the server accepted. The file's size and mtime
 * tell a rerun whether it reads the same file; a different one must not be skipped into.
 */
export interface ResumePoint {
  version: 1;
  file: string;
  size: number;
  mtimeMs: number;
  /** Every line up to this one is done: accepted, or finally refused and reported. */
  lastAcceptedLine: number;
  /** Messages the server accepted over all runs so far. */
  acceptedMessages: number;
  completed: boolean;
  updatedAt: string;
}

export interface FileIdentity {
  file: string;
  size: number;
  mtimeMs: number;
}

export function identifyFile(file: string): FileIdentity {
  let stats;
  try {
    stats = statSync(file);
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  if (!stats.isFile()) throw new CliError(`${file} is not a file`);
  return { file: resolve(file), size: stats.size, mtimeMs: stats.mtimeMs };
}

/** The resume point for this file, undefined when there is none; a point for another file is an error. */
export function loadResumePoint(resumeFile: string, identity: FileIdentity): ResumePoint | undefined {
  if (!existsSync(resumeFile)) return undefined;
  let point: ResumePoint;
  try {
    point = JSON.parse(readFileSync(resumeFile, 'utf8')) as ResumePoint;
  } catch (error) {
    throw new CliError(
      `the resume file ${resumeFile} is not readable JSON (${String(error)}); delete it or pass --restart`,
    );
  }
  if (point?.version !== 1 || !Number.isInteger(point.lastAcceptedLine) || point.lastAcceptedLine < 0) {
    throw new CliError(
      `the resume file ${resumeFile} is not a Tributary resume point; delete it or pass --restart`,
    );
  }
  if (point.size !== identity.size || point.mtimeMs !== identity.mtimeMs) {
    throw new CliError(
      `the resume file ${resumeFile} was written for a different version of the file ` +
        `(size ${point.size} and mtime ${new Date(point.mtimeMs).toISOString()} then, ` +
        `size ${identity.size} and mtime ${new Date(identity.mtimeMs).toISOString()} now); ` +
        'pass --restart to import it from the first line, or --resume-file for another point',
    );
  }
  return point;
}

/** Written to a temporary file and renamed, so a crash mid-write never leaves half a resume point. */
export function saveResumePoint(resumeFile: string, point: ResumePoint): void {
  const temporary = `${resumeFile}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(point, null, 2) + '\n');
  renameSync(temporary, resumeFile);
}
