/**
 * What `promise` settles with, or `late` when it has not settled within `ms`: a wait with a
 * bound, its timer cleared either way. The promise itself runs on; nothing here stops it.
 */
export async function within<T, L>(promise: Promise<T>, ms: number, late: L): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<L>((resolve) => {
    timer = setTimeout(resolve, ms, late);
  });
  try {
    return await Promise.race([promise, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
