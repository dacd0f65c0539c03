import { basename, extname } from 'node:path';
import { Command } from 'commander';
import { workspaceName } from '@tributary/contracts';
import { CliError, EXIT, type CliContext } from './shared/cli-context';
import { ConfigApiClient } from './shared/config-api.client';
import { resolveConnection } from './shared/connection-options';
import { integer, withSubcommandExamples } from './shared/help';
import { Column, print, renderRecord, renderTable } from './shared/output';
import {
  functionIdOf,
  functionKindOf,
  readSettingDeclarations,
  readSettingValues,
  readTextFile,
} from './functions/function-files';

const columns: Column<any>[] = [
  { header: 'id', value: (fn) => fn.id },
  { header: 'type', value: (fn) => fn.type },
  { header: 'version', value: (fn) => fn.version },
  { header: 'deployed', value: (fn) => fn.deployed_version },
  { header: 'display name', value: (fn) => fn.display_name },
  { header: 'updated', value: (fn) => fn.update_time },
];

const versionColumns: Column<any>[] = [
  { header: 'version', value: (version) => version.version },
  { header: 'deployed', value: (version) => (version.deployed ? 'yes' : '') },
  { header: 'created', value: (version) => version.create_time },
];

const logColumns: Column<any>[] = [
  { header: 'time', value: (entry) => entry.time },
  { header: 'level', value: (entry) => entry.level },
  { header: 'version', value: (entry) => entry.version },
  { header: 'message id', value: (entry) => entry.message_id },
  { header: 'message', value: (entry) => entry.message },
];

function describeFunction(fn: any, options: { withCode?: boolean } = {}): string {
  const settings = (fn.settings ?? []).map(
    (setting: any) =>
      `${setting.name} (${setting.type}${setting.required ? ', required' : ''}${setting.sensitive ? ', sensitive' : ''})`,
  );
  return (
    renderRecord([
      ['name', fn.name],
      ['id', fn.id],
      ['type', fn.type],
      ['display name', fn.display_name],
      ['version', fn.version],
      ['deployed version', fn.deployed_version],
      ['settings', settings],
      ['created', fn.created_at],
      ['updated', fn.update_time],
    ]) + (options.withCode && typeof fn.code === 'string' ? `\n${fn.code.replace(/\n?$/, '\n')}` : '')
  );
}

/** `workspaces/<ws>/functions[/<id>]`, each part encoded as a path segment. */
export function functionPath(workspace: string, id?: string): string {
  const base = `${workspaceName(encodeURIComponent(workspace))}/functions`;
  return id === undefined ? base : `${base}/${encodeURIComponent(functionIdOf(id))}`;
}

/**
 * `tributary functions list|get|create|update|deploy|versions|delete|preview|logs`: tenant functions
 * (docs/functions.md): code from local files, settings declarations as JSON, a preview that runs code
 * once on a sample without saving it.
 */
export function functionsCommand(context: CliContext): Command {
  const functions = new Command('functions')
    .alias('function')
    .description('Write, deploy and try out source, destination and insert functions');

  functions
    .command('list')
    .description("A workspace's functions, of one --type or all")
    .argument('<workspace>', 'the workspace slug')
    .option('--type <type>', 'SOURCE, DESTINATION or INSERT_DESTINATION')
    .action(async (workspace: string, options: { type?: string }, command: Command) => {
      const connection = resolveConnection(command, context);
      const query = options.type ? `?type=${functionKindOf(options.type)}` : '';
      const list = await new ConfigApiClient(connection).listAll(
        `${functionPath(workspace)}${query}`,
        'functions',
      );
      print(context, connection, list, () => renderTable(list, columns));
    });

  functions
    .command('get')
    .description('Show a function, its latest code included')
    .argument('<workspace>', 'the workspace slug')
    .argument('<id>', 'the function id (sfn_..., dfn_..., ifnd_...)')
    .action(async (workspace: string, id: string, _options: unknown, command: Command) => {
      const connection = resolveConnection(command, context);
      const fn = await new ConfigApiClient(connection).request('GET', functionPath(workspace, id));
      print(context, connection, fn, () => describeFunction(fn, { withCode: true }));
    });

  functions
    .command('create')
    .description('Create a function from a file of code; its version 1 is deployed at once')
    .argument('<workspace>', 'the workspace slug')
    .requiredOption('--type <type>', 'SOURCE, DESTINATION or INSERT_DESTINATION')
    .requiredOption('--file <path>', 'the code, one script (no import or export)')
    .option('--settings <path>', 'the settings it declares: a JSON array of declarations')
    .option('--display-name <name>', "a human-readable name (default: the file's name)")
    .action(
      async (
        workspace: string,
        options: { type: string; file: string; settings?: string; displayName?: string },
        command: Command,
      ) => {
        const connection = resolveConnection(command, context);
        const kind = functionKindOf(options.type);
        const code = readTextFile('--file', options.file);
        const settings = options.settings ? readSettingDeclarations(options.settings) : [];
        const fn = await new ConfigApiClient(connection).request(
          'POST',
          `${functionPath(workspace)}?type=${kind}`,
          {
            function: {
              display_name: options.displayName ?? basename(options.file, extname(options.file)),
              code,
              buildpack: 'boreal',
              settings,
            },
          },
        );
        print(context, connection, fn, () => describeFunction(fn));
      },
    );

  functions
    .command('update')
    .description('Save a new version (code, settings or name); instances run it once deployed')
    .argument('<workspace>', 'the workspace slug')
    .argument('<id>', 'the function id')
    .option('--file <path>', 'the new code')
    .option('--settings <path>', 'the new settings declarations: a JSON array')
    .option('--display-name <name>', 'a new display name')
    .action(
      async (
        workspace: string,
        id: string,
        options: { file?: string; settings?: string; displayName?: string },
        command: Command,
      ) => {
        const connection = resolveConnection(command, context);
        const changes: Record<string, unknown> = {};
        if (options.file !== undefined) changes.code = readTextFile('--file', options.file);
        if (options.settings !== undefined) changes.settings = readSettingDeclarations(options.settings);
        if (options.displayName !== undefined) changes.display_name = options.displayName;
        if (Object.keys(changes).length === 0)
          throw new CliError('give what changes: --file, --settings or --display-name', EXIT.usage);
        const fn = await new ConfigApiClient(connection).request('PATCH', functionPath(workspace, id), {
          function: changes,
          update_mask: { paths: Object.keys(changes).map((key) => `function.${key}`) },
        });
        print(context, connection, fn, () => describeFunction(fn));
      },
    );

  functions
    .command('deploy')
    .description('Make instances run the latest version')
    .argument('<workspace>', 'the workspace slug')
    .argument('<id>', 'the function id')
    .action(async (workspace: string, id: string, _options: unknown, command: Command) => {
      const connection = resolveConnection(command, context);
      const deployed = await new ConfigApiClient(connection).request(
        'POST',
        `${functionPath(workspace, id)}/deploy`,
        {},
      );
      print(
        context,
        connection,
        deployed,
        () => `Deployed version ${deployed.deployed_version} of ${functionIdOf(id)}\n`,
      );
    });

  functions
    .command('versions')
    .description("A function's versions and which one instances run")
    .argument('<workspace>', 'the workspace slug')
    .argument('<id>', 'the function id')
    .action(async (workspace: string, id: string, _options: unknown, command: Command) => {
      const connection = resolveConnection(command, context);
      const list = await new ConfigApiClient(connection).listAll(
        `${functionPath(workspace, id)}/versions`,
        'versions',
      );
      print(context, connection, list, () => renderTable(list, versionColumns));
    });

  functions
    .command('delete')
    .description('Delete a function no instance uses')
    .argument('<workspace>', 'the workspace slug')
    .argument('<id>', 'the function id')
    .action(async (workspace: string, id: string, _options: unknown, command: Command) => {
      const connection = resolveConnection(command, context);
      await new ConfigApiClient(connection).request('DELETE', functionPath(workspace, id));
      const name = `${workspaceName(workspace)}/functions/${functionIdOf(id)}`;
      print(context, connection, { deleted: name }, () => `Deleted ${name}\n`);
    });

  functions
    .command('preview')
    .description(
      'Run code once on a sample, without saving or delivering anything; exits 2 when the function fails',
    )
    .argument('<workspace>', 'the workspace slug')
    .requiredOption('--type <type>', 'SOURCE, DESTINATION or INSERT_DESTINATION')
    .requiredOption('--file <path>', 'the code')
    .requiredOption(
      '--payload <path>',
      "the sample: a message (its type picks the handler), or a source function's request body",
    )
    .option('--settings <path>', 'the settings the code declares: a JSON array')
    .option('--values <path>', 'the settings it runs with: a JSON object of names to values')
    .action(
      async (
        workspace: string,
        options: { type: string; file: string; payload: string; settings?: string; values?: string },
        command: Command,
      ) => {
        const connection = resolveConnection(command, context);
        const kind = functionKindOf(options.type);
        const code = readTextFile('--file', options.file);
        const payload = readTextFile('--payload', options.payload);
        const answer = await new ConfigApiClient(connection).request(
          'POST',
          `${functionPath(workspace)}/preview?type=${kind}`,
          {
            function: {
              code,
              buildpack: 'boreal',
              settings: options.settings ? readSettingDeclarations(options.settings) : [],
            },
            payload,
            settings: options.values ? readSettingValues(options.values) : {},
          },
        );
        print(context, connection, answer, () => describePreview(kind, answer));
        if (!answer.invoke?.success) context.exitCode = EXIT.refused;
      },
    );

  functions
    .command('logs')
    .description("A function's newest log lines (console output and errors), newest first")
    .argument('<workspace>', 'the workspace slug')
    .argument('<id>', 'the function id')
    .option('--instance <name>', "only this instance's lines (its full name)")
    .option('--limit <count>', 'at most this many lines (1-1000)', integer(1, 1000), 100)
    .action(
      async (
        workspace: string,
        id: string,
        options: { instance?: string; limit: number },
        command: Command,
      ) => {
        const connection = resolveConnection(command, context);
        const query = new URLSearchParams({
          page_size: String(options.limit),
          ...(options.instance && { instance: options.instance }),
        });
        const answer = await new ConfigApiClient(connection).request(
          'GET',
          `${functionPath(workspace, id)}/logs?${query}`,
        );
        const logs = answer.logs ?? [];
        print(context, connection, logs, () => renderTable(logs, logColumns));
      },
    );

  return withSubcommandExamples(functions, {
    list: ['tributary functions list acme --type DESTINATION'],
    get: ['tributary functions get acme dfn_2Lr0vWv9yW7rJ8dYkS1Fq5c0XbQ'],
    create: [
      'tributary functions create acme --type DESTINATION --file order-relay.js --settings settings.json',
    ],
    update: ['tributary functions update acme dfn_2Lr0vWv9yW7rJ8dYkS1Fq5c0XbQ --file order-relay.js'],
    deploy: ['tributary functions deploy acme dfn_2Lr0vWv9yW7rJ8dYkS1Fq5c0XbQ'],
    versions: ['tributary functions versions acme dfn_2Lr0vWv9yW7rJ8dYkS1Fq5c0XbQ'],
    delete: ['tributary functions delete acme dfn_2Lr0vWv9yW7rJ8dYkS1Fq5c0XbQ'],
    preview: [
      'tributary functions preview acme --type INSERT_DESTINATION --file mask.js --payload track.json',
      'tributary functions preview acme --type SOURCE --file shop.js --payload order-webhook.json --values values.json',
    ],
    logs: ['tributary functions logs acme dfn_2Lr0vWv9yW7rJ8dYkS1Fq5c0XbQ --limit 20'],
  });
}

/** What a preview did: the output (or why it failed), then the lines it logged. */
function describePreview(kind: string, answer: any): string {
  const invoke = answer.invoke ?? {};
  const lines: string[] = [];
  if (invoke.success) {
    lines.push(kind === 'SOURCE' ? 'ok: the function emitted' : 'ok: the function returned');
    lines.push(prettyJson(invoke.output));
  } else {
    lines.push(`failed: ${invoke.error_reason ?? 'no reason given'}`);
  }
  const logs: any[] = answer.logs ?? [];
  if (logs.length > 0) {
    lines.push('', 'logs:');
    for (const entry of logs) lines.push(`  ${entry.message}`);
    if (answer.logs_truncated) lines.push('  (more lines were dropped)');
  }
  return lines.join('\n') + '\n';
}

function prettyJson(text: unknown): string {
  if (typeof text !== 'string') return String(text);
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
