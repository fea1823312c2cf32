import type { Filter } from 'mongodb';
import { createRequire } from 'node:module';

import { types, type Tokens, type tokenizer } from 'ret';
import safeRegex from 'safe-regex2';

import { ApiError } from '../errors.js';

/**
 * Logto's list search (packages/core/src/utils/search.ts), over MongoDB:
 *
 * - `search=v` searches every searchable field, `search.<field>=v` one of them (repeatable in `exact` mode);
 * - `mode` / `mode.<field>`: `like` (the default: SQL LIKE, `%` any run, `_` one character, `\` escapes),
 *   `exact`, `similar_to` (SQL SIMILAR TO; case-sensitive only) or `posix` (a regular expression);
 * - `joint` (or `jointMode`): `or` (the default) or `and` between the fields searched;
 * - `isCaseSensitive`: `false` by default.
 *
 * A malformed search is 400 `request.invalid_input`, as Logto's. Every pattern becomes an anchored
 * regular expression checked here first, and bounded before it reaches the database (whose own time
 * limit, `maxTimeMS`, not every engine keeps): at most `maxUnboundedRepetitions` open-ended
 * repetitions in any pattern; and one the caller writes (`posix`, `similar_to`) is shorter, repeats
 * nothing that repeats (star height 1, safe-regex2), repeats no alternation, refers back to no group,
 * and runs no more than `maxPatternSearches` at once per process (`createSearchGate`).
 */

export type MatchMode = 'like' | 'exact' | 'similar_to' | 'posix';
const matchModes: readonly MatchMode[] = ['like', 'exact', 'similar_to', 'posix'];

export interface SearchMatch {
  /** Undefined: every searchable field. */
  field?: string;
  mode: MatchMode;
  values: string[];
}

export interface Search {
  matches: SearchMatch[];
  joint: 'and' | 'or';
  isCaseSensitive: boolean;
}

/** A search's query may run this long before the database stops it (a caller's regular expression can be slow). */
export const searchTimeLimitMs = 2000;
const maxValueLength = 256;
/** How long a regular expression the caller writes may be. */
const maxWrittenPatternLength = 128;
/** Open-ended repetitions (`*`, `+`, `{n,}`) in one pattern: each one more multiplies the worst case by a value's length. */
const maxUnboundedRepetitions = 4;
/** Repetitions of any kind in a pattern the caller writes (safe-regex2's limit). */
const maxWrittenRepetitions = 8;
/** Searches by a written pattern one process runs at once; more are 429 at once. */
export const maxPatternSearches = 2;

const invalid = (message: string) => new ApiError('request.invalid_input', message);

/** ret's parser (safe-regex2's own): a CommonJS module whose export is the function, which ESM's default import does not type as one. */
const parseRegex: typeof tokenizer = createRequire(import.meta.url)('ret');

/** The field a `search.<field>` or `mode.<field>` key names, undefined for the general one. */
function fieldOf(key: string, allowed: readonly string[]): string | undefined {
  const path = key.split('.');
  if (path.length > 2) throw invalid(`Unsupported nested search field path \`${path.slice(1).join('.')}\`: only first-level fields can be searched.`);
  const field = path[1];
  if (field !== undefined && !allowed.includes(field)) throw invalid(`Search field \`${field}\` is not allowed. Expect one of ${allowed.join(', ')}.`);
  return field;
}

/** Reads a search from a request's query string; undefined when it has none. */
export function parseSearch(params: URLSearchParams, allowed: readonly string[]): Search | undefined {
  const jointValue = params.get('joint') ?? params.get('jointMode');
  if (jointValue && jointValue !== 'and' && jointValue !== 'or') throw invalid(`Search joint mode \`${jointValue}\` is not valid, expect one of and, or.`);
  const caseValue = params.get('isCaseSensitive');
  const modes = new Map<string | undefined, MatchMode>();
  const values = new Map<string | undefined, string[]>();
  for (const [key, value] of params) {
    if (key === 'mode' || key.startsWith('mode.')) {
      const field = fieldOf(key, allowed);
      if (!matchModes.includes(value as MatchMode)) {
        throw invalid(`Search match mode \`${value}\`${field ? ` for field \`${field}\`` : ''} is not valid, expect one of ${matchModes.join(', ')}.`);
      }
      modes.set(field, value as MatchMode);
    } else if (key === 'search' || key.startsWith('search.')) {
      const field = fieldOf(key, allowed);
      if (value.length > maxValueLength) throw invalid(`Search value is longer than ${maxValueLength} characters.`);
      values.set(field, [...(values.get(field) ?? []), value]);
    }
  }
  if (values.size === 0) return undefined;
  const matches = [...values].map(([field, list]): SearchMatch => {
    const mode = modes.get(field) ?? modes.get(undefined) ?? 'like';
    if (list.some((value) => value === '')) throw invalid('Search value cannot be empty.');
    if (mode !== 'exact' && list.length > 1) throw invalid('Only one search value is allowed when search mode is not `exact`.');
    return { field, mode, values: list };
  });
  const isCaseSensitive = caseValue === 'true';
  if (!isCaseSensitive && matches.some(({ mode }) => mode === 'similar_to')) throw invalid('Cannot use case-insensitive match for `similar to`.');
  return { matches, joint: jointValue === 'and' ? 'and' : 'or', isCaseSensitive };
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * An SQL LIKE or SIMILAR TO pattern as a regular expression's source: `%` any run, `_` one character,
 * `\\` escapes the next; every other character as `other` translates it.
 */
function sqlPattern(pattern: string, other: (char: string) => string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const char = pattern[i];
    if (char === '\\' && i + 1 < pattern.length) out += escapeRegex(pattern[(i += 1)]);
    // `%%` is `%`: one open-ended run, not two (each more multiplies the cost of a mismatch).
    else if (char === '%') out += out.endsWith('.*') ? '' : '.*';
    else if (char === '_') out += '.';
    else out += other(char);
  }
  return out;
}

/** LIKE: everything else is literal. */
const likeToRegex = (pattern: string) => `^${sqlPattern(pattern, escapeRegex)}$`;
/** SIMILAR TO keeps the operators `| * + ? {} () []`; `.`, `^` and `$` are literal there. */
const similarToRegex = (pattern: string) => `^(?:${sqlPattern(pattern, (char) => ('.^$/'.includes(char) ? `\\${char}` : char))})$`;

/** Whether a search's mode takes a regular expression the caller writes. */
const writtenByCaller = (mode: MatchMode) => mode === 'posix' || mode === 'similar_to';

/** What in a pattern could make matching it slow, in a sentence; undefined when nothing. */
function costProblem(source: string, written: boolean): string | undefined {
  let tokens: Tokens;
  try {
    tokens = parseRegex(source);
  } catch {
    return 'uses a syntax searches do not take';
  }
  let unbounded = 0;
  let problem: string | undefined;
  const walk = (token: Tokens, insideRepetition: boolean): void => {
    if (token.type === types.REFERENCE) problem ??= 'refers back to a group';
    if (token.type === types.REPETITION) {
      if (token.max === Infinity) unbounded += 1;
      walk(token.value, true);
      return;
    }
    if (token.type === types.ROOT || token.type === types.GROUP) {
      if (token.options && insideRepetition) problem ??= 'repeats an alternation';
      for (const branch of token.options ?? [token.stack ?? []]) for (const inner of branch) walk(inner, insideRepetition);
    }
  };
  walk(tokens, false);
  if (written && problem) return problem;
  if (unbounded > maxUnboundedRepetitions) return `repeats without bound more than ${maxUnboundedRepetitions} times`;
  if (written && !safeRegex(source, { limit: maxWrittenRepetitions })) return `nests repetitions or repeats more than ${maxWrittenRepetitions} times`;
  return undefined;
}

function regexOf(mode: MatchMode, value: string, isCaseSensitive: boolean): RegExp {
  const source = mode === 'exact' ? `^${escapeRegex(value)}$` : mode === 'like' ? likeToRegex(value) : mode === 'similar_to' ? similarToRegex(value) : value;
  const written = writtenByCaller(mode);
  if (written && value.length > maxWrittenPatternLength) throw invalid(`A ${mode} search value is longer than ${maxWrittenPatternLength} characters.`);
  let regex: RegExp;
  try {
    regex = new RegExp(source, isCaseSensitive ? '' : 'i');
  } catch (error) {
    throw invalid(`Search value \`${value}\` is not a valid ${mode} pattern: ${(error as Error).message}`);
  }
  // Bounded here, before the database runs it: an engine may not keep the query's time limit.
  const problem = costProblem(source, written);
  if (problem) throw invalid(`Search value \`${value}\` ${problem}, which could take too long to match; simplify it.`);
  return regex;
}

/**
 * The MongoDB filter of a search over `fields` (the API's field name to the stored one). Exact matches
 * that are case-sensitive compare by equality; every other match is a regular expression.
 */
export function searchFilter<T>(search: Search | undefined, fields: Record<string, string>): Filter<T> {
  if (!search) return {};
  const clauses = search.matches.map(({ field, mode, values }) => {
    // The general search looks in every stored field once, however many spellings name it.
    const paths = field === undefined ? [...new Set(Object.values(fields))] : [fields[field]];
    const conditions = paths.flatMap((path) =>
      values.map((value) => ({ [path]: mode === 'exact' && search.isCaseSensitive ? value : regexOf(mode, value, search.isCaseSensitive) })),
    );
    return conditions.length === 1 ? conditions[0] : { $or: conditions };
  });
  if (clauses.length === 1) return clauses[0] as Filter<T>;
  return (search.joint === 'and' ? { $and: clauses } : { $or: clauses }) as Filter<T>;
}

/**
 * Runs a search's queries: a pattern the database refuses, or one that runs past `searchTimeLimitMs`,
 * is the caller's 400 `request.invalid_input`, not our 500.
 */
export async function searching<R>(run: (limits: { maxTimeMS: number }) => Promise<R>): Promise<R> {
  try {
    return await run({ maxTimeMS: searchTimeLimitMs });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // 50: MaxTimeMSExpired; 2 (BadValue) and 51091: a regular expression the server cannot compile.
    if (code === 50) throw invalid(`The search took longer than ${searchTimeLimitMs} ms; narrow it.`);
    if (code === 2 || code === 51091) throw invalid(`The search is not valid: ${(error as Error).message}`);
    throw error;
  }
}

/**
 * One process's searches: those by a pattern the caller writes (`posix`, `similar_to`) run at most
 * `max` at once; one more is refused at once (429, `Retry-After: 1`), so that a burst of them cannot
 * keep the database busy for everyone else. Other searches run as `searching` does.
 */
export function createSearchGate(max = maxPatternSearches) {
  let running = 0;
  return async function search<R>(given: Search | undefined, run: (limits: { maxTimeMS: number }) => Promise<R>): Promise<R> {
    const written = given?.matches.some(({ mode }) => writtenByCaller(mode)) ?? false;
    if (!written) return searching(run);
    if (running >= max)
      throw new ApiError('request.too_many_requests', `${max} searches by pattern are running already; try again in a moment`, { retryAfter: 1 });
    running += 1;
    try {
      return await searching(run);
    } finally {
      running -= 1;
    }
  };
}

export type SearchGate = ReturnType<typeof createSearchGate>;
