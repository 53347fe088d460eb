// Types of Quarry's browser host (index.js).

/** Where bytes come from: a URL or path (fetched; read from disk for file: URLs in Node), a
 * `Response`, or the bytes themselves. */
export type Source = URL | string | Response | ArrayBuffer | ArrayBufferView;

export interface InitOptions {
  /** The WebAssembly module; default: dist/quarry_wasm_bg.wasm beside index.js. */
  module?: Source | WebAssembly.Module;
  /** Where `invokeSkill` loads the entity data from when `entity` or `name` first needs it;
   * default: dist/entity_data.bin beside index.js. */
  entityData?: Source;
}

/** The extraction targets; the contract's five plus `phone` (E.164) and `ip`. */
export type Target = 'email' | 'url' | 'date' | 'entity' | 'name' | 'phone' | 'ip';

export interface ExtractInput {
  text: string;
  /** A target name, matched case-insensitively; anything else fails with `InvalidTarget`. */
  target: Target | string;
  /** Reference time for relative dates, RFC 3339; default: this machine's clock and zone. */
  now?: string;
  /** Default region for phone numbers without a country code, ISO 3166 alpha-2; default US. */
  region?: string;
  /** Add `matches`: every match with code-point offsets and its normalised value. */
  detail?: boolean;
}

export interface Match {
  text: string;
  /** Code-point offset, inclusive. */
  start: number;
  /** Code-point offset, exclusive. */
  end: number;
  value: string;
  type: string;
}

/** The CLI's JSON: `{<target>: value}` where value is one string, a list, or `[]`; for `entity`
 * `{people, organizations, locations}`; with `detail`, `matches` too. */
export type ExtractResult = {
  [target: string]: string | string[] | EntityGroups | Match[] | undefined;
  matches?: Match[];
};

export interface EntityGroups {
  people: string[];
  organizations: string[];
  locations: string[];
}

export interface CheckInput {
  text: string;
  target: Target | string;
  /** What the model answered, as its raw text; an object is serialised to JSON first. */
  output: string | object;
}

/** Where a value was found in the text: code-point and byte offsets (end exclusive). */
export interface Alignment {
  start: number;
  end: number;
  byte_start: number;
  byte_end: number;
  status: 'match_exact' | 'match_normalized' | 'match_fuzzy' | 'match_lesser';
  /** 1 for exact and normalised matches; the share of tokens matched otherwise. */
  score: number;
}

export interface GroundedValue {
  /** `email`, or for entities `entity.people` / `entity.organizations` / `entity.locations`. */
  field: string;
  value: string;
  evidence:
    | { kind: 'aligned'; alignment: Alignment }
    | { kind: 'date_parts'; year: Alignment; day: Alignment | null };
}

export interface Violation {
  kind: 'malformed_output' | 'schema_violation' | 'type_mismatch' | 'implausible' | 'hallucination';
  value: string | null;
  /** e.g. `contact@example.com does not appear in source text - hallucination detected`. */
  message: string;
  detail: string | null;
}

export type Verdict =
  | { verdict: 'accepted'; values: GroundedValue[] }
  | { verdict: 'rejected'; reasons: Violation[] };

/** A repair or coercion the parser made, e.g. `trailing_comma`, `single_quotes`,
 * `extracted_from_fence`. */
export type Flag = string;

export interface Parsed {
  value: unknown;
  flags: Flag[];
  /** Sum of the flags' costs; lower means fewer guesses. */
  score: number;
  /** What does not fit the schema, each with a JSONPath such as `$.items[2].price`. */
  errors: { path: string; message: string }[];
}

export interface Repaired {
  value: unknown;
  flags: Flag[];
}

/** A failed skill call. `message` reads `<code> - <reason>`, e.g.
 * `InvalidTarget - unknown target 'fax'`. */
export class SkillError extends Error {
  constructor(code: string, reason: string);
  readonly name: 'SkillError';
  /** The contract's failure code: `InvalidTarget`, `MissingTarget`, `EmptyInput`,
   * `InputTooLarge`, `InvalidNow`, `InvalidRegion`, `MalformedRequest`, `EntityDataNotLoaded`;
   * `MalformedOutput` from `repair`; `Conflict` from a second, different entity data. */
  readonly code: string;
  /** What was wrong, without the code. */
  readonly reason: string;
}

/** Loads the WebAssembly module (once; later calls return the same promise). */
export function init(options?: InitOptions): Promise<void>;

/** Installs the entity data `entity` and `name` need; resolves at once if it is loaded. */
export function loadEntityData(source?: Source): Promise<void>;

/** Whether the module is loaded, so the synchronous functions can run. */
export function isReady(): boolean;

/** Whether the entity data is installed. */
export function entityDataLoaded(): boolean;

/** The reference's browser host: loads what the call needs, then runs the skill. */
export function invokeSkill(skill: 'extract', input: ExtractInput): Promise<ExtractResult>;
export function invokeSkill(skill: 'check', input: CheckInput): Promise<Verdict>;

/** The extract skill, synchronously (after `init`; `entity` and `name` after `loadEntityData`). */
export function extract(input: ExtractInput): ExtractResult;

/** The output guardrail, synchronously (after `init`). */
export function check(input: CheckInput): Verdict;

/** The best reading of a model's reply as a value of `schema` (default `{}`: any value), or
 * `null` when the reply holds no JSON. */
export function parse(raw: string, schema?: object): Parsed | null;

/** `raw` read as one JSON document with the repairs it needed; throws `MalformedOutput` when
 * there is nothing to read, and with `strict` when a repair needs a guess. */
export function repair(raw: string, options?: { strict?: boolean }): Repaired;
