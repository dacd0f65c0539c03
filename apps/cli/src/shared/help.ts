import { InvalidArgumentError, type Command } from 'commander';

/** Adds an "Examples" section to a command's `--help`: every command shows at least one. */
export function withExamples(command: Command, ...examples: string[]): Command {
  return command.addHelpText(
    'after',
    `\n${examples.length > 1 ? 'Examples' : 'Example'}:\n${examples.map((example) => `  $ ${example}`).join('\n')}\n`,
  );
}

/** For options that may be given several times: `-w a -w b`. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `withExamples` for each subcommand of a group, by name: `{ list: ['tributary ... list'] }`. */
export function withSubcommandExamples(group: Command, examples: Record<string, string[]>): Command {
  for (const [name, lines] of Object.entries(examples)) {
    const subcommand = group.commands.find((candidate) => candidate.name() === name);
    if (!subcommand) throw new Error(`${group.name()} has no subcommand ${name}`);
    withExamples(subcommand, ...lines);
  }
  return group;
}

/** An option's integer value within bounds; anything else is a usage error naming the option. */
export function integer(min: number, max: number) {
  return (value: string): number => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < min || parsed > max)
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    return parsed;
  };
}
