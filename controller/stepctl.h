/* stepctl.h - the subcommands of stepctl, one entry point each.
 *
 * Every command takes the argv that follows its name (argv[0] is the command
 * name) and returns the process exit code documented in docs/cli.md.
 */
#ifndef STEPCTL_H
#define STEPCTL_H

int stepctl_cmd_decide(int argc, char **argv);     /* controller/decide/decide_cli.c */
int stepctl_cmd_decisions(int argc, char **argv);  /* controller/decide/decide_cli.c */
int stepctl_cmd_replay(int argc, char **argv);     /* controller/decide/decide_cli.c */
int stepctl_cmd_explain(int argc, char **argv);    /* controller/decide/decide_cli.c */
int stepctl_cmd_grant(int argc, char **argv);     /* controller/grant/grant_cli.c */
int stepctl_cmd_revoke(int argc, char **argv);    /* controller/grant/grant_cli.c */
int stepctl_cmd_release(int argc, char **argv);   /* controller/grant/grant_cli.c */
int stepctl_cmd_grants(int argc, char **argv);    /* controller/grant/grant_cli.c */
int stepctl_cmd_verify_store(int argc, char **argv); /* controller/store/vstore_cli.c */
int stepctl_cmd_serve(int argc, char **argv);     /* controller/serve/serve_cli.c */
int stepctl_cmd_next(int argc, char **argv);      /* controller/grant/next_cli.c */
int stepctl_cmd_qoe(int argc, char **argv);       /* controller/qoe/qoe_cli.c */
int stepctl_cmd_status(int argc, char **argv);    /* controller/grant/status_cli.c */
int stepctl_cmd_plan(int argc, char **argv);       /* controller/plan/plan_cli.c */
int stepctl_cmd_sign_url(int argc, char **argv);     /* controller/sign/sign_cli.c */
int stepctl_cmd_sign_cookies(int argc, char **argv); /* controller/sign/sign_cli.c */

#endif
