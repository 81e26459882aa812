/**
 * Loads the peer contenders (src/eval/peers.ts) on demand: openskill and
 * ts-trueskill are development dependencies, present in a clone and absent
 * from an installed package, so a missing one becomes a MissingPeerError
 * that names the package to install.
 */
import { MissingPeerError } from './missing-peer-error.js';

export const PEER_PACKAGES = ['openskill', 'ts-trueskill'] as const;

export type Peers = typeof import('./peers.js');

export async function loadPeers(): Promise<Peers> {
  try {
    return await import('./peers.js');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const message = error instanceof Error ? error.message : '';
    if (code === 'ERR_MODULE_NOT_FOUND' && PEER_PACKAGES.some((name) => message.includes(`'${name}'`))) throw new MissingPeerError(PEER_PACKAGES);
    throw error;
  }
}

/** Whether the peer libraries can be loaded (a data set's default run leaves them out, with a warning, when not). */
export async function peersAvailable(): Promise<boolean> {
  try {
    await loadPeers();
    return true;
  } catch (error) {
    if (error instanceof MissingPeerError) return false;
    throw error;
  }
}
