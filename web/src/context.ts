/** What every page gets: the API client and the session (one of each per tab). */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api } from './api.js';
import type { Session } from './session.js';

export interface ConsoleServices {
  api: Api;
  session: Session;
}

export const Services = createContext<ConsoleServices | undefined>(undefined);

export function useServices(): ConsoleServices {
  const s = useContext(Services);
  if (!s) throw new Error('useServices outside <Services.Provider>');
  return s;
}
