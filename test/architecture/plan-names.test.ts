/**
 * What a plan includes is asked of the plan (`plan.capabilities.threatModels`, `plan.batchMax`, …),
 * never read from its name: an operator's plan of another name with the same capabilities must
 * behave the same. So no module of src/ but the plans table names a built-in plan.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/limits/plans.js';

const SRC = join(import.meta.dirname, '../../src');
const PLANS_MODULE = 'limits/plans.ts';
const BUILT_IN = new Set(Object.keys(DEFAULT_PLANS));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/**
 * Built-in plan names in a module, as `file:line name`: string literals (compared, listed in a
 * set, looked up, given as a default) and property reads (`plans.pro`).
 */
export function planNamesIn(file: string, text = readFileSync(file, 'utf8')): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node, name: string) =>
    found.push(`${relative(SRC, file)}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1} ${name}`);
  const visit = (node: ts.Node): void => {
    if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && BUILT_IN.has(node.text)) at(node, node.text);
    if (ts.isPropertyAccessExpression(node) && BUILT_IN.has(node.name.text)) at(node, node.name.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('plan names', () => {
  it(`no module of src/ but ${PLANS_MODULE} names a built-in plan`, () => {
    const files = sourceFiles(SRC).filter((f) => relative(SRC, f) !== PLANS_MODULE);
    expect(files.flatMap((f) => planNamesIn(f))).toEqual([]);
  });

  it('the check finds a comparison, a set, a lookup and a property read, and lets other text pass', () => {
    const probe = join(SRC, 'probe.ts');
    const found = planNamesIn(
      probe,
      [
        "if (plan.name === 'free') deny();",
        "const paid = ['pro', 'business'].includes(account.plan);",
        'const without = new Set([`starter`]);',
        "const fallback = planNamed(plans, 'free');",
        'const cap = plans.pro.monthlyCap;',
        "switch (name) { case 'business': break; }",
      ].join('\n'),
    );
    expect(found).toEqual([
      'probe.ts:1 free',
      'probe.ts:2 pro',
      'probe.ts:2 business',
      'probe.ts:3 starter',
      'probe.ts:4 free',
      'probe.ts:5 pro',
      'probe.ts:6 business',
    ]);
    expect(planNamesIn(probe, "const view = { pro: plan.capabilities.threatModels, note: 'free text', plan: plan.name };")).toEqual([]);
  });

  it(`${PLANS_MODULE} declares the built-in plans`, () => {
    expect(planNamesIn(join(SRC, PLANS_MODULE)).length).toBeGreaterThan(0);
  });
});
