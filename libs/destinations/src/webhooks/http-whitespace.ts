/**
 * `value` without leading and trailing HTTP whitespace (space, tab, CR, LF). A scan from each end, so the
 * cost stays linear in the value's length whatever it holds: the regular expression this replaces,
 * `/^[\t\n\r ]+|[\t\n\r ]+$/g`, retried its second branch from every position of a long inner run of
 * whitespace, which is quadratic.
 */
export function trimHttpWhitespace(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isHttpWhitespace(value.charCodeAt(start))) start++;
  while (end > start && isHttpWhitespace(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

function isHttpWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}
