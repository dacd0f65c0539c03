import { userDecider, UserRecord } from '@tributary/config-domain';
import { ConfigProjection, unchanged } from './config-projection';

/** Users by email, lower-cased: an email names one user whatever its case. */
export type UsersView = Map<string, UserRecord>;

export const usersProjection: ConfigProjection<UsersView> = {
  initial: () => new Map(),

  evolve(view, event) {
    if (event.type !== 'UserRegistered') return unchanged(view);
    const key = event.data.email.toLowerCase();
    const before = view.get(key);
    const state = userDecider.evolve(
      before ? { status: 'registered', user: before } : userDecider.initialState,
      event,
    );
    if (state.status === 'registered') view.set(key, state.user);
    return unchanged(view);
  },
};

export function userByEmail(view: UsersView, email: string): UserRecord | undefined {
  return view.get(email.toLowerCase());
}
