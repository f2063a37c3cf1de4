/** An answer whose JSON text is made already (by the engine, or once for several uses). */
export const jsonText = (text: string, status = 200) => new Response(text, { status, headers: { 'content-type': 'application/json' } });
