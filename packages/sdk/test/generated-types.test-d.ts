/**
 * The printed types of src/generated.ts are the contract's: checked by `tsc` (`pnpm typecheck`),
 * so a contract change that was not generated again fails the type check with the operation's
 * or event's name in the message.
 */
import type {
  OperationId as ContractOperationId,
  OperationInput,
  OperationOutput,
  TClientErrorCode,
  TKnownErrorCode,
  TStreamEvent,
  TStreamEventData,
  TStreamEventName,
  TValidationIssue,
} from '@convene/contract';
import type {
  KnownErrorCode,
  OperationId,
  OperationTypes,
  StreamEvent,
  StreamEventData,
  ValidationIssue,
} from '../src/generated';

/** True when A and B are the same type (not merely assignable to each other). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Flattens intersections and interfaces into one object type, recursively. */
type Flat<T> = T extends (infer E)[] ? Flat<E>[] : T extends object ? { [K in keyof T]: Flat<T[K]> } : T;
type Same<A, B> = Equal<Flat<A>, Flat<B>>;
/** Passes when no key fails: otherwise the error names the failing keys. */
type NoneFailing<Failing> = [Failing] extends [never] ? true : Failing;

/** No fields. */
type Nothing = Record<never, never>;

type PathAndParams<K extends OperationId> = (OperationTypes[K]['path'] extends undefined
  ? Nothing
  : OperationTypes[K]['path']) &
  (OperationTypes[K]['params'] extends undefined ? Nothing : OperationTypes[K]['params']);
/** zod's input of an empty object is `Record<string, never>`: no field to send, as `{}` says. */
type NoIndex<T> = string extends keyof T ? Nothing : T;

// Every operation of the contract, and nothing else.
export const sameOperations: Same<OperationId, ContractOperationId> = true;

// Outputs: exactly what the server's schema says it sends (z.output).
type OutputsFailing = {
  [K in ContractOperationId]: Same<OperationTypes[K]['output'], OperationOutput<K>> extends true ? never : K;
}[ContractOperationId];
export const outputs: NoneFailing<OutputsFailing> = true;

/**
 * Inputs: exactly z.input, except where the contract pre-processes a value it receives as
 * unknown (a timestamp query): there the SDK asks for what the schema then validates (a string).
 */
type Preprocessed<Generated, Contract> = {
  [K in keyof Contract]: unknown extends Contract[K]
    ? K extends keyof Generated
      ? Generated[K]
      : never
    : Contract[K];
};
type InputsFailing = {
  [K in ContractOperationId]: Same<
    PathAndParams<K>,
    Preprocessed<PathAndParams<K>, NoIndex<OperationInput<K>>>
  > extends true
    ? never
    : K;
}[ContractOperationId];
export const inputs: NoneFailing<InputsFailing> = true;

// Stream events: every name, each with the contract's data, and the same discriminated union.
export const sameEventNames: Same<keyof StreamEventData, TStreamEventName> = true;
type EventsFailing = {
  [K in TStreamEventName]: Same<StreamEventData[K], TStreamEventData[K]> extends true ? never : K;
}[TStreamEventName];
export const events: NoneFailing<EventsFailing> = true;
export const sameEventUnion: Same<StreamEvent, TStreamEvent> = true;

// A 400's issues (the error body's `issues`) as the contract lists them.
export const validationIssue: Same<ValidationIssue, TValidationIssue> = true;

// The error codes: the service's and the SDK's own (a LinkDeniedError's `link_denied`).
export const knownErrorCodes: Same<KnownErrorCode, TKnownErrorCode | TClientErrorCode> = true;
