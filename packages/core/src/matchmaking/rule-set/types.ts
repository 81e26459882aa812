/**
 * The typed rule set: a FlexMatch rule set (ruleLanguageVersion "1.0") as
 * parseRuleSet returns it, checked and with defaults filled in, plus Ladder's
 * role-slot extension on teams.
 */
import type { Expression } from './expression.js';

export type AttributeType = 'string' | 'number' | 'string_list' | 'string_number_map';
export type AttributeValue = string | number | string[] | Record<string, number>;

export interface PlayerAttributeDef {
  name: string;
  type: AttributeType;
  /** Absent: every player must send the attribute. */
  default?: AttributeValue;
}

export interface TeamDef {
  /** The definition's name; with quantity > 1 the teams are `name_1` … `name_N`. */
  name: string;
  minPlayers: number;
  maxPlayers: number;
  quantity: number;
  /** Ladder extension: role slots, e.g. { tank: 1, damage: 2, support: 2 }. */
  roles?: Record<string, number>;
}

export type PartyAggregation = 'min' | 'max' | 'avg';
export type ComparisonOperation = '=' | '!=' | '<' | '<=' | '>' | '>=';
export type CollectionOperation = 'intersection' | 'contains' | 'reference_intersection_count';

/** A referenceValue: a literal or a property expression. */
export type Reference = { kind: 'literal'; value: AttributeValue } | { kind: 'expression'; expression: Expression; source: string };

interface RuleBase {
  name: string;
  description?: string;
  /** Index in `rules`, for paths in messages. */
  index: number;
}
export interface BatchDistanceRule extends RuleBase {
  type: 'batchDistance';
  batchAttribute: string;
  maxDistance?: number;
  partyAggregation: PartyAggregation;
}
export interface ComparisonRule extends RuleBase {
  type: 'comparison';
  measurements: Expression[];
  referenceValue?: Reference;
  operation: ComparisonOperation;
  partyAggregation: PartyAggregation;
}
export interface DistanceRule extends RuleBase {
  type: 'distance';
  measurements: Expression[];
  referenceValue?: Reference;
  minDistance?: number;
  maxDistance?: number;
  partyAggregation: PartyAggregation;
}
export interface CollectionRule extends RuleBase {
  type: 'collection';
  measurements: Expression[];
  referenceValue?: Reference;
  operation: CollectionOperation;
  minCount?: number;
  maxCount?: number;
  partyAggregation: 'union' | 'intersection';
}
export interface LatencyRule extends RuleBase {
  type: 'latency';
  maxLatency: number;
  maxDistance?: number;
  distanceReference?: 'avg' | 'min';
}
export interface AbsoluteSortRule extends RuleBase {
  type: 'absoluteSort';
  sortDirection: 'ascending' | 'descending';
  sortAttribute: string;
  mapKey?: 'minValue' | 'maxValue';
  partyAggregation: PartyAggregation;
}
export interface DistanceSortRule extends RuleBase {
  type: 'distanceSort';
  sortDirection: 'ascending' | 'descending';
  sortAttribute: string;
  mapKey?: 'minValue' | 'maxValue';
  partyAggregation: PartyAggregation;
}
export type CompoundStatement = { op: 'and' | 'or' | 'xor' | 'not'; args: CompoundStatement[] } | { rule: string };
export interface CompoundRule extends RuleBase {
  type: 'compound';
  statement: CompoundStatement;
}
export type Rule = BatchDistanceRule | ComparisonRule | DistanceRule | CollectionRule | LatencyRule | AbsoluteSortRule | DistanceSortRule | CompoundRule;

export interface ExpansionStep {
  waitTimeSeconds: number;
  value: number;
}
export interface Expansion {
  /** `rules[Name].property` or `teams[Name].minPlayers|maxPlayers`. */
  target: string;
  kind: 'rule' | 'team';
  name: string;
  property: string;
  /** Sorted by wait time. */
  steps: ExpansionStep[];
}

export interface Algorithm {
  strategy: 'exhaustiveSearch' | 'balanced';
  batchingPreference: 'random' | 'sorted' | 'largestPopulation' | 'fastestRegion';
  sortByAttributes: string[];
  balancedAttribute?: string;
  expansionAgeSelection: 'newest' | 'oldest';
  backfillPriority: 'normal' | 'low' | 'high';
}

export interface RuleSet {
  name?: string;
  ruleLanguageVersion: '1.0';
  playerAttributes: PlayerAttributeDef[];
  algorithm: Algorithm;
  teams: TeamDef[];
  rules: Rule[];
  expansions: Expansion[];
  /** More than 40 players at most: FlexMatch's large-match mode. */
  large: boolean;
}
