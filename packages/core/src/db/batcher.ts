/**
 * Group commit for a hot statement: callers push one item each and get its own result, while
 * the items of concurrent callers go to the database together as one statement. At most
 * `maxInFlight` statements run at once; items arriving meanwhile queue, and the queue goes out
 * whole as the next statement. At low load a batch is one item, one round trip, no added wait;
 * under load the round trips, plan set-ups and commits per item fall with the batch size.
 */
export class Batcher<Item, Result> {
  private queue: { item: Item; resolve(result: Result): void; reject(error: unknown): void }[] = [];
  private inFlight = 0;

  /**
   * @param run executes one batch; it returns one result per item, in the items' order.
   */
  constructor(
    private readonly run: (items: Item[]) => Promise<Result[]>,
    private readonly maxInFlight: number,
  ) {}

  push(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.flush();
    });
  }

  private flush(): void {
    if (this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.inFlight += 1;
    this.run(batch.map((entry) => entry.item))
      .then((results) => {
        if (results.length !== batch.length)
          throw new Error(`a batch of ${batch.length} answered ${results.length} results`);
        for (const [i, entry] of batch.entries()) entry.resolve(results[i]!);
      })
      .catch((error: unknown) => {
        for (const entry of batch) entry.reject(error);
      })
      .finally(() => {
        this.inFlight -= 1;
        this.flush();
      });
  }
}
