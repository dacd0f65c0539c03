/**
 * What the CLI prints of a server's data (names, descriptions, error messages) passes through here:
 * a workspace's display name holding `ESC ]52;…` or `ESC [2J` must not drive the operator's terminal,
 * and a carriage return or a bidi override must not forge or hide what is shown. Control characters
 * (C0 but tab and, where allowed, newline; DEL; C1) and bidi controls become visible `\xNN` / `\u{NNNN}`
 * escapes instead. Written as a loop over code points: no regular expression to get wrong.
 */
export function safeForTerminal(text: string, options: { keepNewlines?: boolean } = {}): string {
  let safe = '';
  for (const character of text) {
    const code = character.codePointAt(0)!;
    if (character === '\n' && options.keepNewlines) safe += character;
    else if (character === '\t') safe += character;
    else if (code < 0x20 || (code >= 0x7f && code <= 0x9f))
      safe += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (isBidiControl(code)) safe += `\\u{${code.toString(16)}}`;
    else safe += character;
  }
  return safe;
}

/**
 * JSON for the terminal: `JSON.stringify` already escapes C0 characters, but not C1 (U+0080–U+009F,
 * which some terminals read as escape sequences) or bidi controls; those become `\uNNNN`, which is
 * still the same JSON.
 */
export function safeJsonForTerminal(json: string): string {
  let safe = '';
  for (const character of json) {
    const code = character.codePointAt(0)!;
    safe +=
      (code >= 0x7f && code <= 0x9f) || isBidiControl(code)
        ? `\\u${code.toString(16).padStart(4, '0')}`
        : character;
  }
  return safe;
}

/** Marks and embeddings that reorder what a terminal shows (U+200E/F, U+202A–E, U+2066–9). */
function isBidiControl(code: number): boolean {
  return (
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}
