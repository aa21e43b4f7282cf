/**
 * Counts the event loop's turns (setImmediate callbacks run) while `work` runs: the observable sign
 * that long CPU work gives the server a chance to answer in between.
 */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<{ turns: number; value: T }> {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  try {
    const value = await work();
    return { turns, value };
  } finally {
    running = false;
  }
}
