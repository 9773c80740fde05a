/* A family's parts freed (familydata.h). */
#include <stdlib.h>
#include "familydata.h"

static void family_member_clear(struct family_member *m)
{
	free(m->name);
	free(m->dir);
	free(m->stem);
	free(m->run_id);
	free(m->agent);
	for (size_t k = 0; k < FAMILY_ARTIFACT_KINDS; k++)
		free(m->artifact[k]);
}

void family_free(struct family *fam)
{
	if (!fam || __atomic_sub_fetch(&fam->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	for (size_t i = 0; i < fam->n; i++)
		family_member_clear(&fam->members[i]);
	free(fam->members);
	for (size_t i = 0; i < fam->n_artifacts; i++)
		free(fam->artifacts[i]);
	free(fam->artifacts);
	free(fam->folder);
	free(fam);
}
