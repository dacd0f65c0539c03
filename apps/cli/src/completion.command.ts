import { Argument, Command } from 'commander';
import type { CliContext } from './shared/cli-context';
import { withExamples } from './shared/help';
import { bashCompletion, zshCompletion } from './completion/shell-completion';

/** `tributary completion bash|zsh`: prints the shell's completion script, read from the program itself. */
export function completionCommand(context: CliContext, program: () => Command): Command {
  return withExamples(
    new Command('completion')
      .description('Print the shell completion script for bash or zsh')
      .addArgument(new Argument('<shell>', 'bash or zsh').choices(['bash', 'zsh']))
      .action((shell: 'bash' | 'zsh') => {
        context.stdout.write(shell === 'bash' ? bashCompletion(program()) : zshCompletion(program()));
      }),
    'source <(tributary completion bash)    # in ~/.bashrc',
    'source <(tributary completion zsh)     # in ~/.zshrc, after compinit',
  );
}
