import { MemoryTicketStore } from './memory.js';
import { runTicketStoreSuite } from './conformance.js';

runTicketStoreSuite({
  name: 'in process',
  newStore: async () => {
    const store = new MemoryTicketStore();
    return { store, dispose: () => store.close() };
  },
  runs: 100,
});
