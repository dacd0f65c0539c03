// The lib dependency map (`libs/boundaries.json`) is the one source of the lint's boundary rules;
// these tests hold the architecture doc's table to it, hold it to the libs that exist, and check
// that `npm run lint` refuses what it does not allow.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const { libs } = JSON.parse(readFileSync(join(root, 'libs', 'boundaries.json'), 'utf8')) as {
  libs: Record<string, { pure: boolean; mayImport: string[] }>;
};

/** The "may import" column of docs/architecture.md's Libraries table, by lib. */
function documentedMap(): Record<string, string[]> {
  const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
  const section = doc.slice(
    doc.indexOf('## Libraries'),
    doc.indexOf('\n## ', doc.indexOf('## Libraries') + 1),
  );
  const rows: Record<string, string[]> = {};
  for (const line of section.split('\n')) {
    const cells = line.split(' | ');
    const lib = /^\| `([a-z-]+)`$/.exec(cells[0] ?? '')?.[1];
    if (!lib || cells.length < 3) continue;
    const column = cells[cells.length - 1]!.replace(/ \|$/, '');
    rows[lib] = column === 'nothing of ours' ? [] : [...column.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]!);
  }
  return rows;
}

/** Lints `source` as if it were the file `filePath`; the rule ids of its errors. */
function lint(filePath: string, source: string): { ruleId: string; message: string }[] {
  const output = execFileSync(
    process.execPath,
    [
      join(root, 'node_modules', 'eslint', 'bin', 'eslint.js'),
      '--format',
      'json',
      '--stdin',
      '--stdin-filename',
      filePath,
    ],
    { cwd: root, input: source, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] },
  ).toString();
  return (JSON.parse(output) as { messages: { ruleId: string; message: string }[] }[])[0]!.messages;
}

function lintRefusal(filePath: string, source: string): { ruleId: string; message: string }[] {
  try {
    return lint(filePath, source);
  } catch (error) {
    // eslint exits 1 when it finds errors; its JSON report is still on stdout.
    const stdout = (error as { stdout?: string }).stdout;
    if (!stdout) throw error;
    return (JSON.parse(stdout) as { messages: { ruleId: string; message: string }[] }[])[0]!.messages;
  }
}

describe('lib boundaries', () => {
  it('maps every lib that exists, and only those', () => {
    const present = readdirSync(join(root, 'libs'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    expect(Object.keys(libs).sort()).toEqual(present);
  });

  it('maps only libs onto libs, with no circle', () => {
    for (const [lib, { mayImport }] of Object.entries(libs)) {
      expect({ lib, unknown: mayImport.filter((other) => !(other in libs)) }).toEqual({ lib, unknown: [] });
    }
    const visiting = new Set<string>();
    const done = new Set<string>();
    const visit = (lib: string, path: string[]) => {
      if (done.has(lib)) return;
      if (visiting.has(lib)) throw new Error(`a circle: ${[...path, lib].join(' → ')}`);
      visiting.add(lib);
      for (const other of libs[lib]!.mayImport) visit(other, [...path, lib]);
      visiting.delete(lib);
      done.add(lib);
    };
    for (const lib of Object.keys(libs)) visit(lib, []);
  });

  it('is the table docs/architecture.md shows', () => {
    const expected = Object.fromEntries(Object.entries(libs).map(([lib, { mayImport }]) => [lib, mayImport]));
    expect(documentedMap()).toEqual(expected);
  });

  it('names the pure libs the doc names', () => {
    const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
    const sentence = /Pure libraries \(([^)]*)\)/.exec(doc)![1]!;
    const documented = [...sentence.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]).sort();
    const pure = Object.entries(libs)
      .filter(([, { pure }]) => pure)
      .map(([lib]) => lib)
      .sort();
    expect(documented).toEqual(pure);
  });

  it('makes the lint refuse an import the map does not allow, and pass one it allows', () => {
    const refused = lintRefusal(
      'libs/routing/src/probe.ts',
      "import { EVENT_LOG } from '@tributary/event-log';\nexport const probe = EVENT_LOG;\n",
    );
    expect(refused.map((message) => message.ruleId)).toContain('@typescript-eslint/no-restricted-imports');
    expect(refused.find((m) => m.ruleId === '@typescript-eslint/no-restricted-imports')!.message).toContain(
      'libs/routing may import contracts',
    );
    const relative = lintRefusal(
      'libs/routing/src/probe.ts',
      "import { EVENT_LOG } from '../../event-log/src';\nexport const probe = EVENT_LOG;\n",
    );
    expect(relative.map((message) => message.ruleId)).toContain('@typescript-eslint/no-restricted-imports');
    const pureNest = lintRefusal(
      'libs/routing/src/probe.ts',
      "import { Injectable } from '@nestjs/common';\nexport const probe = Injectable;\n",
    );
    expect(pureNest.map((message) => message.ruleId)).toContain('@typescript-eslint/no-restricted-imports');

    const allowed = lintRefusal(
      'libs/routing/src/probe.ts',
      "import { messageSchema } from '@tributary/contracts';\nexport const probe = messageSchema;\n",
    );
    expect(
      allowed.filter((message) => message.ruleId === '@typescript-eslint/no-restricted-imports'),
    ).toEqual([]);
  }, 60_000);
});

describe('the bench', () => {
  const restricted = (messages: { ruleId: string; message: string }[]) =>
    messages.filter((message) => message.ruleId === '@typescript-eslint/no-restricted-imports');

  it("makes the lint refuse a lib's own files and an app in test/bench, and pass the public entry points", () => {
    const refused = [
      "import { PipelinedJetStreamPublisher } from '../../libs/event-log/src/adapters/jetstream/pipelined-publisher';\nexport const probe = PipelinedJetStreamPublisher;\n",
      "import { NatsServerProcess } from 'libs/event-log/src/testing';\nexport const probe = NatsServerProcess;\n",
      "import { SqliteEventStore } from '@tributary/event-store/src/adapters/sqlite-event-store';\nexport const probe = SqliteEventStore;\n",
      "import { AppModule } from '../../apps/tributary/src/app.module';\nexport const probe = AppModule;\n",
    ];
    for (const source of refused) {
      const messages = restricted(lintRefusal('test/bench/probe.phase.ts', source));
      expect({ source, refused: messages.length }).toEqual({ source, refused: 1 });
      expect(messages[0]!.message).toContain('The bench imports');
    }

    const allowed = lintRefusal(
      'test/bench/probe.phase.ts',
      [
        "import { TRACKING_STREAM } from '@tributary/event-log';",
        "import { NatsServerProcess } from '@tributary/event-log/testing';",
        "import { ConfigApiClient } from '../support/config-api.client';",
        'export const probe = [TRACKING_STREAM, NatsServerProcess, ConfigApiClient];',
        '',
      ].join('\n'),
    );
    expect(restricted(allowed)).toEqual([]);
  }, 60_000);
});
