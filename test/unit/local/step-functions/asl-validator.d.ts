// asl-validator ships no types: the part these tests call.
declare module 'asl-validator' {
  export default function validate(definition: unknown): { isValid: boolean; errors: unknown[] };
}
