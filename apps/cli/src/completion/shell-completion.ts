import type { Command } from 'commander';

/** What completes after a command: its subcommands, then its options and the ones every command takes. */
interface CompletionEntry {
  /** Canonical names from the root, space-separated; '' for the root. */
  path: string;
  words: string[];
}

interface CompletionTable {
  entries: CompletionEntry[];
  /** `prefix word` (an alias included) → the canonical path it leads to. */
  steps: Array<{ from: string; to: string }>;
  /** Options followed by a value, which is skipped when finding the command being typed. */
  valueOptions: string[];
}

function longFlags(command: Command): string[] {
  return command.options.map((option) => option.long ?? option.short ?? '').filter((flag) => flag !== '');
}

/** Read from the program itself, so completion always offers exactly the commands and options there are. */
function completionTable(program: Command): CompletionTable {
  const globalFlags = [...longFlags(program).filter((flag) => flag !== '--version'), '--help'];
  const table: CompletionTable = { entries: [], steps: [], valueOptions: [] };
  const valueOptions = new Set<string>();
  const visit = (command: Command, path: string) => {
    for (const option of command.options) {
      if (option.required || option.optional) {
        if (option.long) valueOptions.add(option.long);
        if (option.short) valueOptions.add(option.short);
      }
    }
    const subcommands = command.commands.filter((sub) => !(sub as unknown as { _hidden?: boolean })._hidden);
    table.entries.push({
      path,
      words: [
        ...subcommands.map((sub) => sub.name()),
        ...(path === '' ? ['--version', ...globalFlags] : [...longFlags(command), ...globalFlags]),
      ].filter((word, index, all) => all.indexOf(word) === index),
    });
    for (const sub of subcommands) {
      const to = path === '' ? sub.name() : `${path} ${sub.name()}`;
      for (const word of [sub.name(), ...sub.aliases()])
        table.steps.push({ from: path === '' ? word : `${path} ${word}`, to });
      visit(sub, to);
    }
  };
  visit(program, '');
  table.valueOptions = [...valueOptions].sort();
  return table;
}

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** The loop both shells run over the words typed so far, finding the (canonical) command path. */
function commandPathLoop(table: CompletionTable, wordsVariable: string, first: string, last: string): string {
  return [
    `  local command_path='' word index skip=0`,
    `  for ((index = ${first}; index < ${last}; index++)); do`,
    `    word="\${${wordsVariable}[index]}"`,
    `    if ((skip)); then skip=0; continue; fi`,
    `    case "$word" in`,
    `      ${table.valueOptions.join('|')}) skip=1; continue ;;`,
    `      -*) continue ;;`,
    `    esac`,
    `    case "\${command_path:+$command_path }$word" in`,
    ...table.steps.map((step) => `      ${quote(step.from)}) command_path=${quote(step.to)} ;;`),
    `    esac`,
    `  done`,
  ].join('\n');
}

function candidatesCase(table: CompletionTable, assign: (words: string[]) => string): string {
  return [
    `  case "$command_path" in`,
    ...table.entries.map((entry) => `    ${quote(entry.path)}) ${assign(entry.words)} ;;`),
    `  esac`,
  ].join('\n');
}

/** `source <(tributary completion bash)`: commands, subcommands and options; files elsewhere. */
export function bashCompletion(program: Command): string {
  const table = completionTable(program);
  return [
    `# bash completion for tributary: source <(tributary completion bash), e.g. in ~/.bashrc`,
    `_tributary_completion() {`,
    commandPathLoop(table, 'COMP_WORDS', '1', 'COMP_CWORD'),
    `  local candidates=''`,
    candidatesCase(table, (words) => `candidates=${quote(words.join(' '))}`),
    `  COMPREPLY=($(compgen -W "$candidates" -- "\${COMP_WORDS[COMP_CWORD]}"))`,
    `}`,
    `complete -o default -F _tributary_completion tributary`,
    '',
  ].join('\n');
}

/** `source <(tributary completion zsh)` after `compinit` in ~/.zshrc. */
export function zshCompletion(program: Command): string {
  const table = completionTable(program);
  return [
    `#compdef tributary`,
    `# zsh completion for tributary: source <(tributary completion zsh) after compinit, e.g. in ~/.zshrc`,
    `_tributary() {`,
    commandPathLoop(table, 'words', '2', 'CURRENT'),
    `  local -a candidates`,
    candidatesCase(table, (words) => `candidates=(${words.map(quote).join(' ')})`),
    `  compadd -- "\${candidates[@]}"`,
    `  [[ "\${words[CURRENT]}" == -* ]] || _files`,
    `}`,
    `compdef _tributary tributary`,
    '',
  ].join('\n');
}
