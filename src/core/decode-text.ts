/** Bytes as text the way reviews read them: UTF-8, or latin1 when that is not valid UTF-8. */
export function decodeText(buffer: Buffer | null | undefined): string | null {
  if (!buffer) return null;
  const text = buffer.toString('utf8');
  // Not UTF-8: read it as latin1 so offsets stay one character per byte (the diff did the same).
  return text.includes('\uFFFD') ? buffer.toString('latin1') : text;
}
