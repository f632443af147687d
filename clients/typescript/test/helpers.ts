// The service the tests run against: started by the Python test suite (tests/clients/test_typescript.py),
// which issues the tokens and passes them here.
export function need(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run these tests through tests/clients/test_typescript.py`);
  return value;
}

export const URL_ = () => need("MEMGOV_URL");
export const AGENT = () => need("MEMGOV_TOKEN");
export const REVIEWER = () => need("MEMGOV_REVIEWER_TOKEN");
export const OWNER = () => need("MEMGOV_OWNER_TOKEN");

let counter = 0;
/** A fresh scope name per test, so tests share the service without seeing each other's writes. */
export function fresh(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}
