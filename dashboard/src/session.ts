import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { can, type Ability, type Session } from './api';

/** The signed-in session, for views that show or hide what the person's role allows. */
export const SessionContext = createContext<Session | null>(null);

export const useSessionInfo = (): Session | null => useContext(SessionContext);

/** True when the signed-in session may do this; the service checks it again on every call. */
export function useCan(ability: Ability): boolean {
  const session = useSessionInfo();
  return session !== null && can(session, ability);
}
