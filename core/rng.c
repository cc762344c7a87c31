/* splitmix64 (Steele, Lea, Flood 2014) and what is built on it. */
#include <math.h>

#include "rng.h"

void rng_seed(Rng *r, uint64_t seed) { r->state = seed; }

uint64_t rng_next(Rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double rng_uniform(Rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

double rng_normal(Rng *r)
{
	double u1 = rng_uniform(r), u2 = rng_uniform(r);
	return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * M_PI * u2);
}

uint64_t rng_derive(uint64_t seed, uint64_t index)
{
	Rng r;
	rng_seed(&r, seed ^ (index * 0xd1b54a32d192ed03ull));
	return rng_next(&r);
}
