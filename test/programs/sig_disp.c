/* Prints the signal state a program finds at main(): each signal's
 * disposition (default, ignored or a handler, with its flags), the blocked
 * mask and the pending set, one line each, so that a run with traceprof can
 * be compared with a run without (test/integration/rel_own_sigdisp.sh).
 *   sig_disp          prints the state and exits 0 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	/* Read before any output: stdio installs nothing, but read first all
	 * the same. */
	struct sigaction sa[NSIG];
	int ok[NSIG];
	for (int s = 1; s < NSIG; s++)
		ok[s] = sigaction(s, NULL, &sa[s]) == 0;
	sigset_t mask, pend;
	sigprocmask(SIG_SETMASK, NULL, &mask);
	sigpending(&pend);
	for (int s = 1; s < NSIG; s++) {
		if (!ok[s]) {
			printf("%d reserved\n", s);
			continue;
		}
		if (!(sa[s].sa_flags & SA_SIGINFO) && sa[s].sa_handler == SIG_DFL)
			printf("%d default\n", s);
		else if (!(sa[s].sa_flags & SA_SIGINFO) && sa[s].sa_handler == SIG_IGN)
			printf("%d ignored\n", s);
		else
			printf("%d handler flags=%#x\n", s, (unsigned)sa[s].sa_flags);
	}
	printf("blocked");
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&mask, s) == 1)
			printf(" %d", s);
	printf("\npending");
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&pend, s) == 1)
			printf(" %d", s);
	printf("\n");
	return 0;
}
