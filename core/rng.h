/* A small, seeded, platform-independent random generator (splitmix64) for
 * generated constants and inputs: the same seed gives the same tensor on
 * every machine. */
#ifndef GDCC_RNG_H
#define GDCC_RNG_H

#include <stdint.h>

typedef struct {
	uint64_t state;
} Rng;

void rng_seed(Rng *r, uint64_t seed);
uint64_t rng_next(Rng *r);
double rng_uniform(Rng *r);            /* [0, 1), 53 bits */
double rng_normal(Rng *r);             /* mean 0, std 1 (Box-Muller) */
/* Derive a stream seed from a base seed and an index (e.g. input number). */
uint64_t rng_derive(uint64_t seed, uint64_t index);

#endif
