/**
 * Names read as words, one rule for every recogniser (side-effect verbs, limits, credentials).
 */

/** Splits a name into lower-case words: `notifyChannel`, `notify-channel`, `notify_channel`, `notify.channel` → notify, channel. */
export function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}
