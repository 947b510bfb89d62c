// What the space page knows, shared by its parts (participants, messages, documents, editor,
// stream). The parts import this module and the ones below them, never the other way round.
import type {
  ArtifactSummary,
  ArtifactView,
  MessageView,
  ParticipantView,
  SpaceClient,
  SpaceView,
} from '@convene/sdk';
import { shownName } from '../../lib/bidi';
import { $ } from '../../lib/dom';
import { hub } from '../../lib/hub';
import { type SpaceCredentials, setSpaceCredentials } from '../../lib/storage';

export const spaceId = $('page').dataset.spaceId ?? '';

/** The document on screen, and this tab's edit of it. */
export interface OpenDocument {
  artifact: ArtifactView;
  editing: boolean;
  /** The lock lapsed or was taken while editing: the draft stays, saving needs the lock again. */
  lockLost: boolean;
  /** The space ended while a draft was unsaved: it stays on screen, read-only, to be copied. */
  draftKept?: boolean | undefined;
  /** How many times this tab has taken the lock: an answer about an earlier one is stale. */
  taken?: number | undefined;
  /** The version the draft started from: a save is refused (409) if someone wrote since. */
  baseVersion?: number | undefined;
  /** The content as last saved or loaded, to tell unsaved changes. */
  saved?: string | undefined;
  heartbeat?: ReturnType<typeof setInterval> | undefined;
  /** When the human last typed in the draft, saved or took the lock: the lock is renewed while they edit. */
  editedAt?: number | undefined;
  /** The page has said that the lock is no longer renewed (nobody edits). */
  idle?: boolean | undefined;
  /** A release of the lock is on its way: its own unlock event is no lock lost. */
  releasing?: boolean | undefined;
}

/** Who sent a message: all a message shown needs to be remembered by. */
export type Sender = Pick<MessageView, 'senderId' | 'senderName' | 'isOwner'>;

export const state = {
  /** The key this tab uses, and what it knows of whose it is. Set before any part runs. */
  me: { key: '' } as SpaceCredentials,
  space: undefined as SpaceView | undefined,
  participants: new Map<string, ParticipantView>(),
  artifacts: new Map<string, ArtifactSummary>(),
  /** The messages shown, by id: a replay after a reconnection shows nothing twice. */
  seen: new Map<string, Sender>(),
  /** The space has ended for this tab (closed, expired, left, removed): everything is read-only. */
  ended: false,
  /** Message ids this tab sent, to learn who "I" am when the key was pasted. */
  sentIds: new Set<string>(),
  doc: undefined as OpenDocument | undefined,
};

/** The SDK's client of this space, with this tab's key. */
export const space = (): SpaceClient => hub.space(spaceId, state.me.key);

export const isOwner = () => state.me.role === 'owner';

/** This tab's own participant record, once known. */
export const myself = (): ParticipantView | undefined =>
  state.me.participantId ? state.participants.get(state.me.participantId) : undefined;

/** A participant's name for a sentence, its bidi controls written out. */
/** The owner muted this tab's participant: it reads, but does not write. */
export const isMuted = () => myself()?.status === 'muted';

export const participantName = (id: string | undefined) =>
  shownName((id && state.participants.get(id)?.name) || 'someone');

/** Remembers who "I" am in this tab (the key and what was learnt about it). */
export function rememberMe(me: SpaceCredentials): void {
  state.me = me;
  setSpaceCredentials(spaceId, me);
}

/** Who holds an artifact's lock now: nobody once it lapsed, even before the unlock event comes. */
export function lockHolder(summary: Pick<ArtifactSummary, 'lockedBy' | 'lockExpiresAt'> | undefined) {
  if (!summary?.lockedBy) return undefined;
  if (summary.lockExpiresAt && Date.parse(summary.lockExpiresAt) <= Date.now()) return undefined;
  return summary.lockedBy;
}
