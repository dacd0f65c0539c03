import { accessTokenDecider, AccessTokenRecord, AccessTokenState } from '@tributary/config-domain';
import { ConfigProjection, unchanged } from './config-projection';

/** Tokens that were not deleted, by number and by hash (what a request's bearer token is checked by). */
export interface AccessTokensView {
  readonly byNumber: Map<number, AccessTokenRecord>;
  readonly byHash: Map<string, AccessTokenRecord>;
  /** The highest number ever created, deleted or not: a token number is never reused. */
  readonly highestNumber: number;
}

export const accessTokensProjection: ConfigProjection<AccessTokensView> = {
  initial: () => ({ byNumber: new Map(), byHash: new Map(), highestNumber: 0 }),

  evolve(view, event) {
    if (event.type !== 'AccessTokenCreated' && event.type !== 'AccessTokenDeleted') return unchanged(view);
    const before = view.byNumber.get(event.data.number);
    const stateBefore: AccessTokenState = before ? { status: 'active', token: before } : { status: 'absent' };
    const state = accessTokenDecider.evolve(stateBefore, event);
    if (state.status === 'active') {
      view.byNumber.set(state.token.number, state.token);
      view.byHash.set(state.token.tokenHash, state.token);
      return unchanged({ ...view, highestNumber: Math.max(view.highestNumber, state.token.number) });
    }
    if (before) {
      view.byNumber.delete(before.number);
      view.byHash.delete(before.tokenHash);
    }
    return unchanged(view);
  },
};

export function accessTokenByHash(view: AccessTokensView, tokenHash: string): AccessTokenRecord | undefined {
  return view.byHash.get(tokenHash);
}

export function accessTokenByNumber(view: AccessTokensView, number: number): AccessTokenRecord | undefined {
  return view.byNumber.get(number);
}

/** In the order they were created. */
export function allAccessTokens(view: AccessTokensView): AccessTokenRecord[] {
  return [...view.byNumber.values()];
}

export function nextAccessTokenNumber(view: AccessTokensView): number {
  return view.highestNumber + 1;
}
