/** `text` cut to at most `max` characters, the cut marked by a trailing `…` (pure: workflow code uses it too). */
export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
