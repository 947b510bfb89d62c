/** The data of an answer together with the HTTP response it came in. */
export interface WithResponse<T> {
  data: T;
  /** The response (its body already read): headers such as `Idempotency-Replayed`, `RateLimit-Remaining`. */
  response: Response;
}

/**
 * What every call returns: a Promise of the data that also gives the HTTP response with
 * `.withResponse()`. The request starts at once (a list's, when it is first awaited or iterated:
 * see MessageList); the data is unwrapped only when awaited, so a caller that only reads
 * `.withResponse()` never leaves a second, unobserved rejection behind.
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface below declares only what the class inherits
export class APIPromise<T> extends Promise<T> {
  // TypeScript's `private`, not `#`: declarations with `#private` do not compile for targets
  // before ES2015, TypeScript 5's default.
  declare private answer: Promise<WithResponse<T>> | undefined;
  declare private readonly start: (() => Promise<WithResponse<T>>) | undefined;
  declare private data: Promise<T> | undefined;

  /** @internal A request under way, or one to start when the answer is first asked for. */
  constructor(result: Promise<WithResponse<T>> | (() => Promise<WithResponse<T>>)) {
    // The Promise this class extends never settles anything: then/catch/finally are redirected.
    super((resolve) => resolve(undefined as T));
    if (typeof result === 'function') this.start = result;
    else this.answer = result;
  }

  /** Results of then/catch/finally are plain Promises, not APIPromises. */
  static override get [Symbol.species]() {
    return Promise;
  }

  /** `{ data, response }`: the parsed answer and the Response it came in. */
  withResponse(): Promise<WithResponse<T>> {
    this.answer ??= this.start!();
    return this.answer;
  }

  /**
   * The data, once the answer came. `catch` and `finally` are Promise's own, which call `then`
   * (with the Promise of [Symbol.species] for `finally`): all three unwrap the data.
   */
  // biome-ignore lint/suspicious/noThenProperty: this is a Promise; awaiting it must unwrap the data
  override then<R1 = T, R2 = never>(
    onfulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    this.data ??= this.withResponse().then((result) => result.data);
    return this.data.then(onfulfilled, onrejected);
  }
}

// The types of the `catch` and `finally` that APIPromise inherits, as they were when it declared
// them: a reason `unknown`, not `any`.
export interface APIPromise<T> {
  catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R>;
  finally(onfinally?: (() => void) | null): Promise<T>;
}

/** An APIPromise of `f` applied to the data of `promise`, keeping its response. */
export function mapResult<A, B>(
  promise: APIPromise<A>,
  f: (data: A, response: Response) => B,
): APIPromise<B> {
  return new APIPromise(
    promise.withResponse().then(({ data, response }) => ({ data: f(data, response), response })),
  );
}
