/**
 * Role queue (a Ladder extension): a team declares role slots, each player
 * lists the roles they accept, and the team is valid when every player gets
 * a slot of a role they accept. That is a bipartite matching; adding players
 * one at a time with an augmenting-path search (Kuhn's algorithm) keeps it
 * exact, where a greedy first-fit would refuse a tank-or-healer once the
 * healer slot was taken by a healer-only player arriving later.
 */
export class RoleAssignment {
  /** Player index → role. */
  private readonly playerRole: Array<string | undefined> = [];
  /** Role → player indexes holding its slots. */
  private readonly holders = new Map<string, number[]>();
  private readonly accepts: Array<readonly string[]> = [];

  constructor(private readonly slots: Readonly<Record<string, number>>) {
    for (const role of Object.keys(slots)) this.holders.set(role, []);
  }

  /** Adds a player accepting `roles` (empty: any role); false, and nothing changed, when no assignment seats everyone. */
  add(roles: readonly string[]): boolean {
    const index = this.accepts.length;
    this.accepts.push(roles.length === 0 ? Object.keys(this.slots) : roles);
    const saved = this.save();
    if (this.augment(index, new Set())) return true;
    this.restore(saved);
    this.accepts.pop();
    return false;
  }

  /** Removes the most recently added players, back to `count`. */
  truncate(count: number): void {
    while (this.accepts.length > count) {
      const index = this.accepts.length - 1;
      const role = this.playerRole[index];
      if (role !== undefined) {
        const list = this.holders.get(role)!;
        list.splice(list.indexOf(index), 1);
      }
      this.playerRole.length = index;
      this.accepts.pop();
    }
  }

  get size(): number {
    return this.accepts.length;
  }

  /** Role of each player, in the order they were added. */
  roles(): string[] {
    return this.playerRole.slice(0, this.accepts.length) as string[];
  }

  private augment(player: number, seen: Set<string>): boolean {
    for (const role of this.accepts[player]) {
      if (seen.has(role) || !this.holders.has(role)) continue;
      seen.add(role);
      const list = this.holders.get(role)!;
      if (list.length < this.slots[role]) {
        list.push(player);
        this.playerRole[player] = role;
        return true;
      }
      for (let k = 0; k < list.length; k++) {
        const other = list[k];
        // Move `other` to another role it accepts, freeing this slot.
        if (this.augment(other, seen)) {
          list[k] = player;
          this.playerRole[player] = role;
          return true;
        }
      }
    }
    return false;
  }

  private save(): { roles: Array<string | undefined>; holders: Map<string, number[]> } {
    return { roles: [...this.playerRole], holders: new Map([...this.holders].map(([r, l]) => [r, [...l]])) };
  }
  private restore(s: { roles: Array<string | undefined>; holders: Map<string, number[]> }): void {
    this.playerRole.length = 0;
    this.playerRole.push(...s.roles);
    for (const [r, l] of s.holders) this.holders.set(r, l);
  }
}
