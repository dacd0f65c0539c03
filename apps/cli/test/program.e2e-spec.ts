// What the program itself promises, before any server is involved: its version, an example in every
// command's help, the usage exit code, and completion scripts for bash and zsh that offer exactly the
// commands and options there are.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { buildProgram } from '../src/cli.program';
import { REPOSITORY_ROOT, runCliChild, runCliInProcess } from './cli-e2e.kit';

function leafCommands(command: Command, path: string[] = []): string[][] {
  if (command.commands.length === 0) return [path];
  return command.commands.flatMap((sub) => leafCommands(sub, [...path, sub.name()]));
}

describe('tributary CLI: the program', () => {
  let directory: string;
  beforeAll(() => (directory = mkdtempSync(join(tmpdir(), 'tributary-cli-program-'))));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  const program = buildProgram({ stdout: { write: () => true }, stderr: { write: () => true }, env: {} });
  const leaves = leafCommands(program);

  it('prints the package version with --version, as a child process too', async () => {
    const { version } = JSON.parse(readFileSync(join(REPOSITORY_ROOT, 'package.json'), 'utf8'));
    expect(await runCliInProcess(['--version'])).toMatchObject({ code: 0, stdout: `${version}\n` });
    const child = await runCliChild(['--version']);
    expect({ code: child.code, stdout: child.stdout }).toEqual({ code: 0, stdout: `${version}\n` });
  }, 30_000);

  it('has every command the operators need', () => {
    expect(leaves.map((path) => path.join(' '))).toEqual(
      expect.arrayContaining([
        'destinations list',
        'destinations get',
        'destinations create',
        'destinations enable',
        'destinations disable',
        'destinations delete',
        'filters list',
        'filters create',
        'filters delete',
        'filters preview',
        'replays start',
        'replays status',
        'regulations create',
        'regulations list',
        'regulations get',
        'regulations cancel',
        'functions list',
        'functions get',
        'functions create',
        'functions update',
        'functions deploy',
        'functions versions',
        'functions delete',
        'functions preview',
        'functions logs',
        'dead-letters list',
        'dead-letters redrive',
        'tail',
        'completion',
        'import',
        'bootstrap',
      ]),
    );
  });

  it('shows an example in the help of every command, and the exit codes in the main help', async () => {
    for (const path of leaves) {
      const help = await runCliInProcess([...path, '--help']);
      expect({ path, code: help.code }).toEqual({ path, code: 0 });
      expect(help.stdout).toMatch(new RegExp(`\\nExamples?:\\n  \\$ .*tributary ${path[0]}`));
    }
    const main = await runCliInProcess(['--help']);
    expect(main.stdout).toMatch(
      /Exit codes: 0 ok, 1 usage .* 2 the server refused .* 3 the server could not be reached/s,
    );
  });

  it('exits 1 on a wrong command line', async () => {
    const unknownCommand = await runCliInProcess(['destinatons', 'list']);
    expect(unknownCommand).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/unknown command 'destinatons'/),
    });
    const unknownOption = await runCliInProcess(['destinations', 'list', 'a', 'b', '--colour']);
    expect(unknownOption).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/unknown option '--colour'/),
    });
    const badUrl = await runCliInProcess(['destinations', 'list', 'a', 'b'], {
      env: { TRIBUTARY_URL: 'ftp://x' },
    });
    expect(badUrl).toMatchObject({ code: 1, stderr: expect.stringMatching(/must be http\(s\)/) });
    const badShell = await runCliInProcess(['completion', 'fish']);
    expect(badShell).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/Allowed choices are bash, zsh/),
    });
  });

  it('completes commands, subcommands (aliases too) and options in bash', async () => {
    const script = await runCliInProcess(['completion', 'bash']);
    expect(script.code).toBe(0);
    const file = join(directory, 'tributary.bash');
    writeFileSync(file, script.stdout);
    const complete = (words: string[]) => {
      const run = spawnSync(
        'bash',
        [
          '-c',
          `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _tributary_completion; printf '%s\\n' "\${COMPREPLY[@]}"`,
          'complete',
          file,
          ...words,
        ],
        { encoding: 'utf8' },
      );
      expect(run.stderr).toBe('');
      return run.stdout.split('\n').filter(Boolean);
    };
    expect(complete(['tributary', 'de'])).toEqual(['destinations', 'dead-letters']);
    expect(complete(['tributary', '--url', 'http://x', 'destination', ''])).toEqual(
      expect.arrayContaining(['list', 'get', 'create', 'enable', 'disable', 'delete', '--json']),
    );
    expect(complete(['tributary', 'replays', 'start', 'acme', 'web', 'webhooks', '--'])).toEqual(
      expect.arrayContaining(['--from', '--to', '--wait', '--json', '--url']),
    );
    expect(complete(['tributary', 'tail', 'acme', 'web', '--type', 'track', '--e'])).toEqual(['--event']);
    expect(complete(['tributary', 'function', 'p'])).toEqual(['preview']);
    expect(complete(['tributary', 'functions', 'preview', 'acme', '--type', 'SOURCE', '--'])).toEqual(
      expect.arrayContaining(['--file', '--payload', '--settings', '--values', '--json']),
    );
    expect(complete(['tributary', '--'])).toContain('--version');
    expect(complete(['tributary', 'filters', 'list', '--'])).not.toContain('--version');
  });

  it('prints a zsh completion script with the same commands, that zsh can read when it is installed', async () => {
    const script = await runCliInProcess(['completion', 'zsh']);
    expect(script.code).toBe(0);
    expect(script.stdout).toMatch(/^#compdef tributary\n/);
    expect(script.stdout).toContain(
      "'destinations') candidates=('list' 'get' 'create' 'enable' 'disable' 'delete'",
    );
    expect(script.stdout).toContain("'tail') candidates=('--type' '--event' '--limit'");
    expect(script.stdout).toMatch(/\ncompdef _tributary tributary\n$/);
    const zsh = spawnSync('zsh', ['-n'], { input: script.stdout, encoding: 'utf8' });
    if (zsh.error) return; // no zsh on this machine: the syntax check needs it
    expect({ status: zsh.status, stderr: zsh.stderr }).toEqual({ status: 0, stderr: '' });
  });
});
